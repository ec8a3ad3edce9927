// The console's bulk replays on a real inbox on both engines: an issue replayed from its row once
// confirmed, a replay's progress streamed to the page (`event: replay`), Cancel stopping it between
// two pages (none half done, none lost), one bulk replay at a time, and every new action refused
// cross-site with nothing replayed or cancelled.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Inbox, ReplayOptions, ReplayProgress } from '../lib';
import { PAGE } from '../lib/bullmq/bullmq-dead-letters';
import { REPLAY_BATCH } from '../lib/pg-boss/pg-boss-inbox';
import type { ProgressEvent } from '../lib/inbox-console/replay-progress';
import { inboxConsole, type InboxConsoleHandler } from 'service-webhooks/inbox-console';
import { captureLogger } from './support/capture-logger';
import { issuedDelivery, makeDeadLetters } from './support/dead-letters';
import { describeEachEngine } from './support/describe-each-engine';
import { eventually } from './support/inbox-engines';
import { listen } from './support/listen';
import { seedDeadLetters } from './support/seed-dead-letters';

type ReplayEvent = ProgressEvent;

describeEachEngine('the inbox console’s bulk replays on $name', (engine, server) => {
  let inbox: Inbox;
  let name: string;
  let queue = 0;
  const closing: (() => Promise<void> | void)[] = [];

  beforeEach(() => {
    name = `console-bulk-${process.pid}-${++queue}`;
    inbox = server().inbox(name);
  });
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
    await inbox.close();
  }, 30_000);

  /** The console at `/ops` on node:http, on `on` (the inbox, or a wrapper of it). */
  async function mounted(on: Inbox = inbox) {
    const logger = captureLogger();
    const handler: InboxConsoleHandler = inboxConsole({
      inbox: on,
      authorize: () => 'ada@example.com',
      basePath: '/ops',
      logger,
    });
    closing.push(() => handler.close());
    const app = await listen((req: IncomingMessage, res: ServerResponse) => handler(req, res));
    closing.push(app.close);
    const url = `${app.url}/ops`;
    const html = await (await fetch(`${url}/`)).text();
    const token = /<meta name="inbox-console-token" content="([^"]+)">/.exec(html)?.[1] ?? '';
    const post = (action: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${url}/actions/${action}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: app.url, ...headers },
        body: new URLSearchParams({ token, ...fields }).toString(),
      });
    return { url, html, logger, post };
  }

  /** The console's live stream, its `event: replay` data kept in order. */
  async function follow(url: string) {
    const stop = new AbortController();
    const answer = await fetch(`${url}/stream`, { signal: stop.signal });
    const events: ReplayEvent[] = [];
    const reader = answer.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    void (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        text += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = text.indexOf('\n\n')) >= 0) {
          const block = text.slice(0, end);
          text = text.slice(end + 2);
          const data = /^event: replay\ndata: (.*)$/s.exec(block)?.[1];
          if (data !== undefined) events.push(JSON.parse(data) as ReplayEvent);
        }
      }
    })();
    closing.push(() => stop.abort());
    const until = async (what: string, check: (e: ReplayEvent) => boolean, timeoutMs = 30_000) => {
      await eventually(what, () => events.some(check), timeoutMs);
      return events.find(check)!;
    };
    return { events, until };
  }

  const counts = async () => {
    const s = await inbox.status();
    return { dead: s.dead, queued: s.waiting + s.delayed + s.active };
  };

  it('replays an issue from its row once confirmed, its progress streamed and its end logged with who did it', async () => {
    await makeDeadLetters(
      inbox,
      [issuedDelivery('evt_1'), issuedDelivery('evt_2'), issuedDelivery('evt_3')],
      3,
      'the CRM answered 503 for ap_1',
    );
    const [issue] = await inbox.issues();
    const { url, html, logger, post } = await mounted();
    expect(html.match(/data-testid="replay-issue"/g)).toHaveLength(1);
    expect(html).toContain(`name="issue" value="${issue!.key}"`);
    const live = await follow(url);

    const asked = await post('replay', { issue: issue!.key });
    expect(asked.status).toBe(200);
    const confirm = await asked.text();
    expect(confirm).toContain('Put back the dead letters of the issue ag.access_pass.issued · crmSync ·');
    expect(confirm).toContain('(3 dead letters)');
    expect(await counts()).toEqual({ dead: 3, queued: 0 });

    const started = await post('replay', { issue: issue!.key, confirmed: 'yes' });
    expect([started.status, started.headers.get('location')]).toEqual([303, '/ops/?done=replay-started']);
    const done = await live.until('the replay done', (e) => e.state === 'done');
    expect([done.replayed, done.total, done.words]).toEqual([
      3,
      3,
      expect.stringMatching(/: replayed 3 of 3; done$/),
    ]);
    expect(await counts()).toEqual({ dead: 0, queued: 3 });
    expect(logger.records.filter((r) => r.level === 'info').map((r) => [r.meta.identity, r.message])).toEqual(
      [
        [
          'ada@example.com',
          expect.stringMatching(/ada@example.com started replaying the dead letters of the issue/),
        ],
        [
          'ada@example.com',
          expect.stringMatching(/ada@example.com replayed the dead letters of the issue .*: 3 of 3$/),
        ],
      ],
    );
    const page = await (await fetch(`${url}/`)).text();
    expect(page).toMatch(/data-testid="replay-progress" role="status">Replay of .*: replayed 3 of 3; done</);
  });

  it('an issue no longer open is refused with 404 and nothing is replayed', async () => {
    await makeDeadLetters(inbox, [issuedDelivery('evt_1')], 1);
    const { post } = await mounted();
    for (const confirmed of ['', 'yes'])
      expect((await post('replay', { issue: 'no-such-issue', confirmed })).status).toBe(404);
    expect(await counts()).toEqual({ dead: 1, queued: 0 });
  });

  describe('a replay held between two pages (the engine frozen after its first page)', () => {
    const page = engine.name === 'bullmq' ? PAGE : REPLAY_BATCH;
    const total = page * 2 + 7;
    /** The inbox, with the engine's server frozen as the first page of a replay is reported. */
    let held: Inbox;
    let frozen = false;
    beforeEach(async () => {
      await inbox.status(); // makes pg-boss's queues
      await seedDeadLetters(engine, server().url, name, total, 'held', 120_000);
      frozen = false;
      held = new Proxy(inbox, {
        get(target, property) {
          if (property === 'replay')
            return (what: never, options?: ReplayOptions) =>
              target.replay(what, {
                ...options,
                onProgress: (progress: ReplayProgress) => {
                  if (options?.dryRun !== true && !frozen) {
                    frozen = true;
                    server().pause();
                  }
                  return options?.onProgress?.(progress);
                },
              });
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      // Whatever a test does, the engine goes on before the inbox is closed.
      closing.unshift(() => {
        if (frozen) server().resume();
      });
    }, 150_000);

    it('Cancel stops it at the end of its page: replayed N of M; stopped, none half done, none lost', async () => {
      const { url, logger, post } = await mounted(held);
      const live = await follow(url);
      expect((await post('replay', { type: '', since: '', confirmed: 'yes' })).status).toBe(303);
      await live.until('the first page', (e) => e.state === 'running' && e.replayed === page);
      expect(frozen).toBe(true);
      const cancelled = post('cancel', {});
      const stopping = await live.until('the cancel taken', (e) => e.state === 'stopping');
      expect(stopping.words).toMatch(/^Stopping the replay of every dead letter at the end of this page: /);
      server().resume();
      const answer = await cancelled;
      expect([answer.status, answer.headers.get('location')]).toEqual([303, '/ops/?done=cancelled']);
      const stopped = await live.until('stopped', (e) => e.state === 'stopped');
      // The page under way when Cancel came is put back whole; none after it.
      expect([stopped.replayed, stopped.total]).toEqual([page * 2, total]);
      expect(stopped.words).toBe(`Replay of every dead letter: replayed ${page * 2} of ${total}; stopped`);
      expect(await counts()).toEqual({ dead: total - page * 2, queued: page * 2 });
      expect(logger.messages('info')).toEqual([
        '[service-webhooks] inbox console: ada@example.com started replaying every dead letter',
        '[service-webhooks] inbox console: ada@example.com cancelled the bulk replay',
        `[service-webhooks] inbox console: ada@example.com replayed every dead letter: ${page * 2} of ${total}, stopped`,
      ]);
      const overview = await (await fetch(`${url}/?done=cancelled`)).text();
      expect(overview).toContain(`replayed ${page * 2} of ${total}; stopped`);
      expect(overview).toMatch(/data-testid="cancel-form" hidden>/);
    }, 60_000);

    it.each([
      ['another Origin', { origin: 'https://evil.example' }],
      ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
      ['no token', { token: '' }],
    ])(
      'a Cancel from %s is refused with 403 and the replay is not cancelled; a second replay meanwhile is refused with 409',
      async (_name, headers) => {
        const { url, post } = await mounted(held);
        const live = await follow(url);
        expect((await post('replay', { type: '', since: '', confirmed: 'yes' })).status).toBe(303);
        await live.until('the first page', (e) => e.state === 'running' && e.replayed === page);
        const { token, ...sent } = headers as Record<string, string>;
        const refused = await post('cancel', token === undefined ? {} : { token }, sent);
        expect(refused.status).toBe(403);
        const second = await post('replay', { type: '', since: '', confirmed: 'yes' });
        expect(second.status).toBe(409);
        expect(((await second.json()) as { detail: string }).detail).toMatch(/already running.*nothing more/);
        server().resume();
        const done = await live.until('done', (e) => e.state === 'done');
        expect([done.replayed, done.total]).toEqual([total, total]);
        expect(live.events.some((e) => e.state === 'stopping')).toBe(false);
        expect(await counts()).toEqual({ dead: 0, queued: total });
      },
      60_000,
    );
  });

  it('Cancel with no replay running answers 409; an issue replay from another site is refused with 403, nothing replayed', async () => {
    await makeDeadLetters(inbox, [issuedDelivery('evt_1')], 1);
    const [issue] = await inbox.issues();
    const { post, logger } = await mounted();
    expect((await post('cancel', {})).status).toBe(409);
    for (const headers of [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }] as Record<
      string,
      string
    >[])
      expect((await post('replay', { issue: issue!.key, confirmed: 'yes' }, headers)).status).toBe(403);
    expect(
      (
        await post(
          'replay',
          { issue: issue!.key, confirmed: 'yes', token: 'x' },
          { 'sec-fetch-site': 'same-origin' },
        )
      ).status,
    ).toBe(403);
    expect(await counts()).toEqual({ dead: 1, queued: 0 });
    expect(logger.messages('info')).toEqual([]);
  });
});
