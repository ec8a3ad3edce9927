/**
 * The console's script, plain browser JavaScript with no build step, served as a file (the CSP allows
 * no inline script). The page works without it; with it, the numbers and the pause state follow the
 * inbox's status over server-sent events, and when they change the overview's lists and chart are
 * taken from the page rendered afresh by the server (parsed, never run), so everything is escaped in
 * one place. A bulk replay's progress bar follows `event: replay`, whose words it sets as text.
 */
export const CONSOLE_JS = String.raw`'use strict';
(function () {
  var base = document.body.getAttribute('data-base') || '';
  var live = document.getElementById('live');
  var last = null;
  var pending = null;
  function age(ms) {
    if (ms === null) return '\u2014';
    var s = Math.floor(ms / 1000);
    if (s < 60) return s + ' s';
    var min = Math.floor(s / 60);
    if (min < 60) return min + ' min';
    var h = Math.floor(min / 60);
    return h < 48 ? h + ' h ' + (min % 60) + ' min' : Math.floor(h / 24) + ' days';
  }
  function set(field, value) {
    var node = document.querySelector('[data-field="' + field + '"]');
    if (node) node.textContent = value;
  }
  function swap(fresh, id) {
    var mine = document.getElementById(id);
    var theirs = fresh.getElementById(id);
    if (mine && theirs) mine.replaceWith(document.importNode(theirs, true));
  }
  function refresh() {
    if (pending) return;
    pending = setTimeout(function () {
      pending = null;
      fetch(base + '/', { credentials: 'same-origin' })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(new Error(String(r.status))); })
        .then(function (html) {
          var fresh = new DOMParser().parseFromString(html, 'text/html');
          ['chart', 'tries-note', 'issues', 'newest', 'paused-state'].forEach(function (id) { swap(fresh, id); });
          var form = document.querySelector('[data-testid="pause-form"]');
          var freshForm = fresh.querySelector('[data-testid="pause-form"]');
          if (form && freshForm) form.replaceWith(document.importNode(freshForm, true));
        })
        .catch(function () { /* the next status tries again */ });
    }, 100);
  }
  function onStatus(event) {
    var s = JSON.parse(event.data);
    set('waiting', String(s.waiting));
    set('delayed', String(s.delayed));
    set('active', String(s.active));
    set('dead', String(s.dead));
    if (typeof s.quarantined === 'number') set('quarantined', String(s.quarantined));
    set('oldest', age(s.oldestAgeMs));
    var state = document.getElementById('paused-state');
    var changed = last === null || last.dead !== s.dead || last.paused !== s.paused ||
      (state && state.className.indexOf(s.paused ? 'paused' : 'running') < 0);
    last = s;
    if (changed || document.getElementById('chart')) refresh();
  }
  // A bulk replay's progress: words of the server's, set as text; the section is on the overview.
  function onReplay(event) {
    var r = JSON.parse(event.data);
    var section = document.getElementById('bulk-replay');
    if (!section) return;
    section.hidden = false;
    var bar = document.getElementById('replay-bar');
    var max = Math.max(1, r.total || 0);
    bar.max = max;
    bar.value = Math.min(r.replayed, max);
    document.getElementById('replay-words').textContent = r.words;
    document.getElementById('cancel-form').hidden = !r.busy;
  }
  var stream = new EventSource(base + '/stream');
  stream.onopen = function () { live.textContent = 'live'; live.className = 'on'; };
  stream.onerror = function () { live.textContent = 'live updates off, retrying\u2026'; live.className = 'off'; };
  stream.addEventListener('status', onStatus);
  stream.addEventListener('replay', onReplay);
})();
`;
