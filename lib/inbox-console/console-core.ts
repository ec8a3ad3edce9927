import type { DeadLetter, InboxStatus, JobRecord, ReplayFilter } from '../inbox/inbox';
import { checkOptionKeys } from '../check-option-keys';
import { OptionsError } from '../options-error';
import { resolveLogger, type ResolvedLogger } from '../logger';
import { ActionTokens } from './action-token';
import { BulkReplays } from './bulk-replay';
import { checkAccess } from './console-access';
import { BASE_HEADERS, consoleProblem } from './console-problem';
import type { ConsoleAnswer, ConsoleRequest } from './console-request';
import { CONSOLE_JS } from './console-script';
import { CONSOLE_CSS } from './console-style';
import { confirmReplayPage, filterWords, issueWords } from './confirm-replay-page';
import { deadLetterPage } from './dead-letter-page';
import { deadLettersPage, PAGE_SIZE, type ListPlace } from './dead-letters-page';
import type { InboxConsoleOptions } from './inbox-console-options';
import { handlersOf, hasIssues, replayHandler, type ConsoleIssue } from './newer-fields';
import { overviewPage } from './overview-page';
import { PAGE_CSP, type PageFrame } from './page-layout';
import { progressEvent } from './replay-progress';
import { StatusFeed } from './status-feed';
import { TriesPerMinute } from './tries-per-minute';

const KNOWN = ['inbox', 'authorize', 'basePath', 'logger'] as const;
/** The largest action form read: a token, an id or a type and a time. */
const MAX_FORM_BYTES = 8 * 1024;
/** The newest dead letters on the overview. */
const NEWEST = 10;
/**
 * How far a dead letter's page looks for its id among the newest (of its type) when its link carries
 * no cursor to read it by (an old bookmark, or the letter moved).
 */
const LOOKUP_DEPTH = 1000;
/** The issues an action looks its issue up among: every one `issues()` gives. */
const ISSUES_READ = 1000;

/** The console without a transport: the node and Fetch doors adapt requests to it. */
export interface ConsoleCore<Raw> {
  handle(request: ConsoleRequest<Raw>): Promise<ConsoleAnswer>;
  /** The mount path from `basePath`, `''` at the root. */
  readonly basePath: string;
  onJob(record: JobRecord): void;
  close(): void;
}

function checkBasePath(basePath: unknown, where: string): string {
  if (basePath === undefined || basePath === '' || basePath === '/') return '';
  if (typeof basePath !== 'string' || !/^(\/[A-Za-z0-9._~-]+)+$/.test(basePath.replace(/\/$/, '')))
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `basePath must be a path such as '/ops/webhooks' (got ${JSON.stringify(basePath) ?? String(basePath)})`,
    );
  return basePath.replace(/\/$/, '');
}

function checkOptions<Raw>(options: InboxConsoleOptions<Raw>, where: string): void {
  if (typeof options !== 'object' || options === null)
    throw new OptionsError('ERR_SW_OPTION', where, 'takes { inbox, authorize, basePath?, logger? }');
  checkOptionKeys(options, KNOWN, where);
  const inbox = options.inbox as unknown as Record<string, unknown> | undefined;
  if (
    typeof inbox !== 'object' ||
    inbox === null ||
    !['status', 'deadLetters', 'replay', 'pause', 'resume'].every((m) => typeof inbox[m] === 'function')
  )
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      'inbox must be an inbox from bullmqInbox() (service-webhooks/bullmq) or pgBossInbox() (service-webhooks/pg-boss)',
    );
  const authorize: unknown = options.authorize;
  if (authorize === undefined)
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      "authorize is required: the console shows events and replays them, so it has no open default. Pass authorize: (req) => <your session check> (true, an identity string, or false), or authorize: 'loopback-only' for a try-out on this machine",
    );
  if (typeof authorize !== 'function' && authorize !== 'loopback-only')
    throw new OptionsError(
      'ERR_SW_OPTION',
      where,
      `authorize must be a function (req) => true | identity | false, or 'loopback-only' (got ${JSON.stringify(authorize) ?? typeof authorize})`,
    );
}

/** The form fields of an action, from `application/x-www-form-urlencoded` (or JSON from a program). */
function parseForm(body: string, contentType: string | undefined): URLSearchParams {
  if (contentType?.startsWith('application/json')) {
    const parsed: unknown = JSON.parse(body);
    const form = new URLSearchParams();
    if (typeof parsed === 'object' && parsed !== null)
      for (const [key, value] of Object.entries(parsed)) if (typeof value === 'string') form.set(key, value);
    return form;
  }
  return new URLSearchParams(body);
}

/**
 * Whether a POST comes from the console's own pages: its Origin (sent by browsers on every POST)
 * names the host it was sent to, and Sec-Fetch-Site, when sent, says same-origin. A program sends
 * neither and must still carry a token, which only a page of the console hands out.
 */
function sameOrigin<Raw>(request: ConsoleRequest<Raw>): boolean {
  const site = request.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = request.header('origin');
  if (origin === undefined) return true;
  const host = request.header('host');
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** `since` from the form: an ISO time, or a `datetime-local` value read as UTC. */
function parseSince(value: string | null): Date | undefined | 'invalid' {
  if (value === null || value.trim() === '') return undefined;
  const text = value.trim();
  const date = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(text) ? text : `${text}Z`);
  return Number.isNaN(date.getTime()) ? 'invalid' : date;
}

/** The console's routes, behind `authorize`: see `inboxConsole()` for what it serves. */
export function consoleCore<Raw>(options: InboxConsoleOptions<Raw>, where: string): ConsoleCore<Raw> {
  checkOptions(options, where);
  const { inbox, authorize } = options;
  const basePath = checkBasePath(options.basePath, where);
  const logger: ResolvedLogger = resolveLogger(options.logger ?? console, where);
  const tokens = new ActionTokens();
  const tries = new TriesPerMinute();
  const feed = new StatusFeed(() => inbox.status(), logger);
  const bulk = new BulkReplays(inbox, logger, (state) => feed.replay(progressEvent(state)));

  const html = (status: number, body: string): ConsoleAnswer => ({
    status,
    headers: {
      ...BASE_HEADERS,
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': PAGE_CSP,
    },
    body,
  });
  const asset = (type: string, body: string): ConsoleAnswer => ({
    status: 200,
    headers: { ...BASE_HEADERS, 'Content-Type': `${type}; charset=utf-8` },
    body,
  });
  const redirect = (to: string): ConsoleAnswer => ({
    status: 303,
    headers: { ...BASE_HEADERS, Location: to, 'Content-Type': 'text/plain; charset=utf-8' },
    body: `See ${to}`,
  });

  async function frame(request: ConsoleRequest<Raw>, identity: string, title: string): Promise<PageFrame> {
    const status = await inbox.status();
    const done = request.query.get('done');
    const count = Number(request.query.get('count'));
    // Only words of our own, never the query's text: a link cannot make the page say anything.
    const notice =
      done === 'replayed' && Number.isSafeInteger(count)
        ? `Replayed ${count} dead letter${count === 1 ? '' : 's'}: back in the queue.`
        : done === 'paused'
          ? 'The queue is paused: no worker starts a try until it is resumed.'
          : done === 'resumed'
            ? 'The queue is resumed: workers start tries again.'
            : done === 'replay-started'
              ? 'The replay started: its progress is below, with a button to cancel it.'
              : done === 'cancelled'
                ? 'The replay was cancelled between two pages: what was put back stays put back.'
                : undefined;
    return {
      title,
      base: request.base,
      engine: inbox.engine,
      queue: inbox.name,
      status,
      identity,
      token: tokens.issue(identity),
      loopbackOnly: authorize === 'loopback-only',
      notice,
    };
  }

  async function overview(request: ConsoleRequest<Raw>, identity: string): Promise<ConsoleAnswer> {
    const [f, newest, issues] = await Promise.all([
      frame(request, identity, 'Overview'),
      inbox.deadLetters({ limit: NEWEST }),
      hasIssues(inbox) ? inbox.issues() : Promise.resolve(undefined),
    ]);
    return html(
      200,
      overviewPage(f, { hour: tries.lastHour(), triesWired: tries.wired, newest, issues, bulk: bulk.state }),
    );
  }

  function typeParam(request: ConsoleRequest<Raw>): string | undefined {
    const type = request.query.get('type')?.trim();
    return type === undefined || type === '' ? undefined : type;
  }

  /** A cursor from the query, as a list link or a form carries it. */
  function cursorParam(query: URLSearchParams, name: 'after' | 'before'): string | undefined {
    const cursor = query.get(name);
    return cursor === null || cursor === '' ? undefined : cursor;
  }

  async function list(request: ConsoleRequest<Raw>, identity: string): Promise<ConsoleAnswer> {
    const type = typeParam(request);
    const after = cursorParam(request.query, 'after');
    const before = after === undefined ? cursorParam(request.query, 'before') : undefined;
    // One more than the page, to know whether a page lies beyond it.
    const letters = await inbox.deadLetters({
      limit: PAGE_SIZE + 1,
      type,
      ...(after === undefined ? {} : { after }),
      ...(before === undefined ? {} : { before }),
    });
    const beyond = letters.length > PAGE_SIZE;
    let shown: DeadLetter[];
    let place: ListPlace;
    if (before !== undefined) {
      // The page before, nearest last: the one beyond it is the newer neighbour of its first row.
      shown = beyond ? letters.slice(1) : letters;
      place = {
        type,
        from: beyond ? letters[0]?.cursor : undefined,
        newer: beyond ? shown[0]?.cursor : undefined,
        older: shown.at(-1)?.cursor ?? before,
      };
    } else {
      shown = letters.slice(0, PAGE_SIZE);
      place = {
        type,
        from: after,
        newer: after === undefined ? undefined : (shown[0]?.cursor ?? 'newest'),
        older: beyond ? shown.at(-1)?.cursor : undefined,
      };
    }
    const f = await frame(request, identity, 'Dead letters');
    return html(200, deadLettersPage(f, shown, place));
  }

  /**
   * The dead letter of event `id`: read at once after the cursor its link carries, else looked for
   * among the newest (of `type`), read with a bounded limit.
   */
  async function findLetter(
    id: string,
    type: string | undefined,
    after: string | undefined,
  ): Promise<DeadLetter | undefined> {
    if (after !== undefined) {
      const [next] = await inbox.deadLetters({ limit: 1, type, after });
      if (next?.delivery.id === id) return next;
    }
    for (const letter of await inbox.deadLetters({ limit: LOOKUP_DEPTH, type }))
      if (letter.delivery.id === id) return letter;
    return undefined;
  }

  async function letterPage(
    request: ConsoleRequest<Raw>,
    identity: string,
    id: string,
  ): Promise<ConsoleAnswer> {
    const type = typeParam(request);
    const after = cursorParam(request.query, 'after');
    const found = await findLetter(id, type, after);
    if (found === undefined)
      return consoleProblem(
        404,
        'console-dead-letter-not-found',
        'Not Found',
        `No dead letter of this event among the newest ${LOOKUP_DEPTH}${type === undefined ? '' : ' of its type'}: it may have been replayed. Go back to the list.`,
      );
    return html(200, deadLetterPage(await frame(request, identity, 'Dead letter'), found, after));
  }

  async function act(request: ConsoleRequest<Raw>, identity: string, action: string): Promise<ConsoleAnswer> {
    if (!sameOrigin(request))
      return consoleProblem(
        403,
        'console-cross-site',
        'Forbidden',
        'This action came from another site (its Origin or Sec-Fetch-Site says so) and was not done. Use the console page itself.',
      );
    let form: URLSearchParams;
    try {
      form = parseForm(await request.readBody(MAX_FORM_BYTES), request.header('content-type'));
    } catch {
      return consoleProblem(
        400,
        'console-bad-form',
        'Bad Request',
        `The action's form could not be read (at most ${MAX_FORM_BYTES} bytes of form fields or JSON). Send it from the console page.`,
      );
    }
    if (!tokens.verify(form.get('token') ?? undefined, identity))
      return consoleProblem(
        403,
        'console-token',
        'Forbidden',
        'This action carries no valid token of the console page (a page older than 12 hours, from before a restart, or of someone else) and was not done. Reload the page and try again.',
      );
    const back = request.base === '' ? '/' : `${request.base}/`;
    if (action === 'cancel') {
      const stopping = bulk.cancel();
      if (stopping === undefined)
        return consoleProblem(
          409,
          'console-no-replay',
          'Conflict',
          'No bulk replay is running: nothing was cancelled.',
        );
      logger.info({ identity, action }, `inbox console: ${identity} cancelled the bulk replay`);
      // The page it comes back to shows where the replay stopped.
      await stopping;
      return redirect(`${back}?done=cancelled`);
    }
    // Before the inbox is read for it: while one runs, another is refused at once.
    if (action === 'replay' && form.get('confirmed') === 'yes' && bulk.busy) return replayRunning();
    if (action === 'pause' || action === 'resume') {
      await (action === 'pause' ? inbox.pause() : inbox.resume());
      logger.info({ identity, action, queue: inbox.name }, `inbox console: ${identity} ${action}d the queue`);
      return redirect(`${back}?done=${action}d`);
    }
    const id = form.get('id');
    const handler = form.get('handler');
    if (id !== null && id !== '' && handler !== null && handler !== '') {
      const listed = form.get('type')?.trim();
      const letter = await findLetter(
        id,
        listed === undefined || listed === '' ? undefined : listed,
        cursorParam(form, 'after'),
      );
      if (letter === undefined || handlersOf(letter)?.[handler] === undefined)
        return consoleProblem(
          400,
          'console-no-handler-state',
          'Bad Request',
          'This dead letter has no state for that handler (or this inbox keeps none per handler), so one handler cannot be replayed alone; nothing was replayed. Replay the whole event instead.',
        );
      const replayed = await replayHandler(inbox, id, handler);
      logger.info(
        { identity, action: 'replay', eventId: id, handler, replayed },
        `inbox console: ${identity} replayed handler ${handler} of one dead letter`,
      );
      return redirect(`${back}?done=replayed&count=${replayed}`);
    }
    if (id !== null && id !== '') {
      const replayed = await inbox.replay(id);
      logger.info(
        { identity, action: 'replay', eventId: id, replayed },
        `inbox console: ${identity} replayed one dead letter`,
      );
      return redirect(`${back}?done=replayed&count=${replayed}`);
    }
    const issueKey = form.get('issue');
    if (issueKey !== null && issueKey !== '') {
      const issue = hasIssues(inbox)
        ? (await inbox.issues({ limit: ISSUES_READ })).find((i) => i.key === issueKey)
        : undefined;
      if (issue === undefined)
        return consoleProblem(
          404,
          'console-issue-not-found',
          'Not Found',
          'No open issue has this key (its dead letters may have been replayed meanwhile); nothing was replayed. Go back to the overview.',
        );
      if (form.get('confirmed') !== 'yes')
        return html(
          200,
          confirmReplayPage(await frame(request, identity, 'Replay dead letters?'), {}, issue),
        );
      return startBulk({ issue: issue.key }, issueWords(issue as ConsoleIssue), identity, back, issue.count);
    }
    const since = parseSince(form.get('since'));
    if (since === 'invalid')
      return consoleProblem(
        400,
        'console-bad-since',
        'Bad Request',
        'since must be a date and time such as 2026-11-26T09:30 (UTC).',
      );
    const type = form.get('type')?.trim();
    const filter: ReplayFilter = {
      ...(type === undefined || type === '' ? {} : { type }),
      ...(since === undefined ? {} : { since }),
    };
    if (form.get('confirmed') !== 'yes')
      return html(200, confirmReplayPage(await frame(request, identity, 'Replay dead letters?'), filter));
    // Every dead letter: the status counts them; a narrower filter is counted by a dry run first.
    const total =
      filter.type === undefined && filter.since === undefined ? (await inbox.status()).dead : undefined;
    return startBulk(filter, filterWords(filter), identity, back, total);
  }

  const replayRunning = () =>
    consoleProblem(
      409,
      'console-replay-running',
      'Conflict',
      'A bulk replay is already running on this console; nothing more was started. Wait for it to end, or cancel it from the overview.',
    );

  /** Starts a bulk replay on the server, or refuses (409) while one runs; the overview shows it. */
  function startBulk(
    target: ReplayFilter,
    what: string,
    identity: string,
    back: string,
    total: number | undefined,
  ): ConsoleAnswer {
    if (!bulk.start({ target, what, identity, ...(total === undefined ? {} : { total }) }))
      return replayRunning();
    logger.info(
      {
        identity,
        action: 'replay',
        what,
        type: target.type,
        since: target.since?.toISOString(),
        issue: target.issue,
      },
      `inbox console: ${identity} started replaying ${what}`,
    );
    return redirect(`${back}?done=replay-started`);
  }

  async function route(request: ConsoleRequest<Raw>, identity: string): Promise<ConsoleAnswer> {
    const { method, path } = request;
    if (path.startsWith('/actions/')) {
      const action = path.slice('/actions/'.length);
      if (!['replay', 'pause', 'resume', 'cancel'].includes(action))
        return consoleProblem(
          404,
          'console-not-found',
          'Not Found',
          `No console action ${JSON.stringify(action)}: replay, cancel, pause or resume.`,
        );
      if (method !== 'POST')
        return consoleProblem(
          405,
          'console-method',
          'Method Not Allowed',
          'Actions are POST only, from the console page.',
          { Allow: 'POST' },
        );
      return act(request, identity, action);
    }
    if (method !== 'GET' && method !== 'HEAD')
      return consoleProblem(
        405,
        'console-method',
        'Method Not Allowed',
        'The console pages are read with GET; actions are POSTed to …/actions/.',
        { Allow: 'GET, HEAD' },
      );
    if (path === '/' || path === '') return overview(request, identity);
    if (path === '/dead-letters') return list(request, identity);
    if (path.startsWith('/dead-letters/')) {
      let id: string;
      try {
        id = decodeURIComponent(path.slice('/dead-letters/'.length));
      } catch {
        return consoleProblem(
          400,
          'console-bad-id',
          'Bad Request',
          'The event id in the path is not valid percent-encoding.',
        );
      }
      return letterPage(request, identity, id);
    }
    if (path === '/status') {
      const status: InboxStatus = await inbox.status();
      return {
        status: 200,
        headers: { ...BASE_HEADERS, 'Content-Type': 'application/json; charset=utf-8' },
        body: JSON.stringify(status),
      };
    }
    if (path === '/stream') return feed.open(`${identity}\n${request.remoteAddress ?? ''}`);
    if (path === '/assets/console.js') return asset('text/javascript', CONSOLE_JS);
    if (path === '/assets/console.css') return asset('text/css', CONSOLE_CSS);
    return consoleProblem(
      404,
      'console-not-found',
      'Not Found',
      `The inbox console has no page ${JSON.stringify(path)}; start at its overview.`,
    );
  }

  return {
    basePath,
    async handle(request) {
      // Before anything else is read, the body above all: the app decides who may see and act.
      const access = await checkAccess(authorize, request.raw, request.remoteAddress, logger);
      if ('refused' in access) return access.refused;
      try {
        return await route(request, access.identity);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        logger.error(
          { identity: access.identity, path: request.path, error: message },
          'inbox console: a request failed',
        );
        const options = error instanceof OptionsError;
        return consoleProblem(
          options ? 400 : 502,
          options ? 'console-bad-request' : 'console-inbox-failed',
          options ? 'Bad Request' : 'Bad Gateway',
          options
            ? `The inbox refused this: ${message.replace(/^\[service-webhooks\] /, '')}`
            : 'The inbox did not answer (its Redis or PostgreSQL may be down). An action may have done part of its work: the status shows what is left. Try again when the inbox is back.',
        );
      }
    },
    onJob(record) {
      tries.record(record.outcome);
    },
    close() {
      bulk.close();
      feed.close();
    },
  };
}
