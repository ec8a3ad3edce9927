// The console's security and its pages without a browser: who may use it (asked on every request,
// before any body is read), cross-site actions refused with nothing done, values from events rendered
// as text under a strict CSP, the live stream bounded per client, the actions and their log, paging.
// On a real BullMQ inbox (the console only calls the Inbox interface, the same on both engines; the
// browser proof runs both).
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import type { Inbox } from '../lib';
import { inboxConsole, inboxConsoleFetch, type InboxConsoleHandler } from 'service-webhooks/inbox-console';
import { PAGE_SIZE } from '../lib/inbox-console/dead-letters-page';
import { MAX_STREAMS_PER_CLIENT } from '../lib/inbox-console/status-feed';
import { captureLogger } from './support/capture-logger';
import { issuedDelivery, makeDeadLetters } from './support/dead-letters';
import { describeWithRedis } from './support/redis-server';
import { bullmqEngine, eventually, type EngineServer } from './support/inbox-engines';
import { listen } from './support/listen';
import { seedDeadLetters } from './support/seed-dead-letters';

const HOSTILE = {
  full_name: '<script>window.__owned = 1</script>',
  employee_id: '"><img src=x onerror=alert(1)>',
  title: 'evil\u202Egpj.exe',
};

/** Every route the console serves, as a method and a path: each one is authorized first. */
const ROUTES: [string, string][] = [
  ['GET', '/'],
  ['GET', '/dead-letters'],
  ['GET', '/dead-letters/evt_1'],
  ['GET', '/status'],
  ['GET', '/stream'],
  ['GET', '/assets/console.js'],
  ['POST', '/actions/replay'],
  ['POST', '/actions/pause'],
  ['POST', '/actions/resume'],
  ['POST', '/actions/cancel'],
];

const stub = { status() {}, deadLetters() {}, replay() {}, pause() {}, resume() {} } as unknown as Inbox;

describe('inboxConsole() options', () => {
  it.each<[unknown, RegExp]>([
    [
      { inbox: stub },
      /^\[service-webhooks\] inboxConsole: authorize is required: .*authorize: 'loopback-only'/,
    ],
    [
      { inbox: stub, authorize: 'yes' },
      /inboxConsole: authorize must be a function .* or 'loopback-only' \(got "yes"\)/,
    ],
    [
      { inbox: stub, authorise: () => true },
      /inboxConsole: unknown option "authorise"; did you mean "authorize"\?/,
    ],
    [{ authorize: () => true }, /inboxConsole: inbox must be an inbox from bullmqInbox\(\)/],
    [{ inbox: {}, authorize: () => true }, /inboxConsole: inbox must be an inbox/],
    [
      { inbox: stub, authorize: () => true, basePath: 'ops' },
      /inboxConsole: basePath must be a path such as '\/ops\/webhooks' \(got "ops"\)/,
    ],
    [{ inbox: stub, authorize: () => true, basePath: '/a b' }, /basePath must be a path/],
    [{ inbox: stub, authorize: () => true, logger: 'info' }, /inboxConsole: logger must be an object/],
    [undefined, /inboxConsole: takes \{ inbox, authorize, basePath\?, logger\? \}/],
  ])('%p throws at construction', (options, message) => {
    expect(() => inboxConsole(options as never)).toThrow(message);
    expect(() => inboxConsoleFetch(options as never)).toThrow(
      new RegExp(message.source.replace('inboxConsole', 'inboxConsoleFetch')),
    );
  });
});

describeWithRedis('the inbox console on a real inbox', () => {
  let server: EngineServer;
  let inbox: Inbox;
  const consoles: { close(): void }[] = [];
  const closing: (() => Promise<void>)[] = [];
  let queue = 0;

  beforeAll(async () => {
    server = await bullmqEngine.start();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => {
    inbox = server.inbox(`console-${process.pid}-${++queue}`);
  });
  afterEach(async () => {
    for (const c of consoles.splice(0)) c.close();
    for (const close of closing.splice(0).reverse()) await close();
    await inbox.close();
  });

  /** The console on node:http at `/ops`, as an app mounts it. */
  async function mounted(options: Partial<Parameters<typeof inboxConsole>[0]> = {}) {
    const logger = captureLogger();
    const handler: InboxConsoleHandler = inboxConsole({
      inbox,
      authorize: () => 'ada@example.com',
      basePath: '/ops',
      logger,
      ...options,
    });
    consoles.push(handler);
    const app = await listen((req: IncomingMessage, res: ServerResponse) => handler(req, res));
    closing.push(app.close);
    return { url: `${app.url}/ops`, origin: app.url, logger, handler };
  }

  /** The page's action token, as the page's forms carry it. */
  async function pageToken(url: string, headers: Record<string, string> = {}): Promise<string> {
    const html = await (await fetch(`${url}/`, { headers })).text();
    const token = /<meta name="inbox-console-token" content="([^"]+)">/.exec(html)?.[1];
    if (token === undefined) throw new Error('no token on the page');
    return token;
  }

  const post = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    });

  describe('authorize', () => {
    it.each(ROUTES)(
      'false refuses %s %s with 403 problem+json, and no action is done',
      async (method, path) => {
        await makeDeadLetters(inbox, [issuedDelivery('evt_1')], 1);
        const asked: string[] = [];
        const { url } = await mounted({
          authorize: (req: IncomingMessage) => {
            asked.push(`${req.method} ${req.url}`);
            return false;
          },
        });
        const answer = await fetch(`${url}${path}`, {
          method,
          ...(method === 'POST'
            ? { body: 'id=evt_1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }
            : {}),
        });
        expect(answer.status).toBe(403);
        expect(answer.headers.get('content-type')).toBe('application/problem+json; charset=utf-8');
        expect(await answer.json()).toMatchObject({
          type: 'urn:service-webhooks:problem:console-forbidden',
          status: 403,
          detail: expect.stringMatching(/^\[service-webhooks\] /),
        });
        expect(asked).toEqual([`${method} /ops${path}`]);
        const status = await inbox.status();
        expect([status.dead, status.waiting, status.paused]).toEqual([1, 0, false]);
      },
    );

    it('answers 401 with the challenge when authorize asks for credentials (basic auth)', async () => {
      const { url } = await mounted({ authorize: () => ({ status: 401, challenge: 'Basic realm="ops"' }) });
      for (const [method, path] of ROUTES) {
        const answer = await fetch(`${url}${path}`, { method });
        expect([method, path, answer.status, answer.headers.get('www-authenticate')]).toEqual([
          method,
          path,
          401,
          'Basic realm="ops"',
        ]);
      }
    });

    it('a throwing authorize refuses with 500 and logs no request detail', async () => {
      const { url, logger } = await mounted({
        authorize: () => {
          throw new Error('session store down: secret=hunter2');
        },
      });
      const answer = await fetch(`${url}/`);
      expect(answer.status).toBe(500);
      expect(JSON.stringify(logger.records)).not.toContain('hunter2');
    });

    it("'loopback-only' lets 127.0.0.1 in and says so on the page; the Fetch door without an address is refused", async () => {
      const { url } = await mounted({ authorize: 'loopback-only' });
      const html = await (await fetch(`${url}/`)).text();
      expect(html).toContain('data-testid="loopback-only"');
      expect(html).toContain('data-testid="identity">loopback<');
      const door = inboxConsoleFetch({ inbox, authorize: 'loopback-only', logger: false });
      consoles.push(door);
      expect((await door(new Request('http://app.test/'))).status).toBe(403);
      expect((await door(new Request('http://app.test/'), { remoteAddress: '10.1.2.3' })).status).toBe(403);
      expect((await door(new Request('http://app.test/status'), { remoteAddress: '::1' })).status).toBe(200);
    });

    it('the Fetch door asks authorize before it reads a body: a refused POST leaves it unread', async () => {
      const door = inboxConsoleFetch({ inbox, authorize: () => false, logger: false });
      consoles.push(door);
      const request = new Request('http://app.test/actions/replay', { method: 'POST', body: 'id=evt_1' });
      expect((await door(request)).status).toBe(403);
      expect(request.bodyUsed).toBe(false);
    });
  });

  describe('actions', () => {
    it.each([
      ['another Origin, no token', { origin: 'https://evil.example' }, false],
      ['another Origin, with a valid token', { origin: 'https://evil.example' }, true],
      ['Sec-Fetch-Site cross-site, with a valid token', { 'sec-fetch-site': 'cross-site' }, true],
      ['same origin, no token', {}, false],
    ])('a POST from %s is refused with 403 and nothing is replayed', async (_name, headers, withToken) => {
      await makeDeadLetters(inbox, [issuedDelivery('evt_1')], 1);
      const { url, origin, logger } = await mounted();
      const token = withToken ? await pageToken(url) : undefined;
      const fields = { id: 'evt_1', ...(token === undefined ? {} : { token }) };
      const answer = await post(`${url}/actions/replay`, fields, { origin, ...headers });
      expect(answer.status).toBe(403);
      expect(((await answer.json()) as { detail: string }).detail).toMatch(/was not done/);
      const pause = await post(
        `${url}/actions/pause`,
        { ...(token === undefined ? {} : { token }) },
        { origin, ...headers },
      );
      expect(pause.status).toBe(403);
      const status = await inbox.status();
      expect([status.dead, status.waiting, status.paused]).toEqual([1, 0, false]);
      expect(logger.messages('info')).toEqual([]);
    });

    it('a token given to one identity does not act for another, nor a forged or old one', async () => {
      await makeDeadLetters(inbox, [issuedDelivery('evt_1')], 1);
      let who = 'ada@example.com';
      const { url, origin } = await mounted({ authorize: () => who });
      const token = await pageToken(url);
      who = 'mallory@example.com';
      const [issued, mac] = token.split('.') as [string, string];
      for (const bad of [
        token,
        `${issued}.${mac.slice(0, -2)}AA`,
        `${Number(issued) - 13 * 3600_000}.${mac}`,
        `${issued}.${mac}.x`,
        'x',
      ])
        expect((await post(`${url}/actions/replay`, { id: 'evt_1', token: bad }, { origin })).status).toBe(
          403,
        );
      expect((await inbox.status()).dead).toBe(1);
    });

    it('replays one dead letter from its page, and logs who did it', async () => {
      await makeDeadLetters(inbox, [issuedDelivery('evt_1'), issuedDelivery('evt_2')], 2);
      const { url, origin, logger } = await mounted();
      const answer = await post(
        `${url}/actions/replay`,
        { id: 'evt_1', token: await pageToken(url) },
        { origin, 'sec-fetch-site': 'same-origin' },
      );
      expect([answer.status, answer.headers.get('location')]).toEqual([303, '/ops/?done=replayed&count=1']);
      const status = await inbox.status();
      expect([status.dead, status.waiting]).toEqual([1, 1]);
      expect(logger.records.filter((r) => r.level === 'info').map((r) => r.meta)).toEqual([
        { identity: 'ada@example.com', action: 'replay', eventId: 'evt_1', replayed: 1 },
      ]);
      const page = await (await fetch(`${url}/?done=replayed&count=1`)).text();
      expect(page).toContain('Replayed 1 dead letter: back in the queue.');
    });

    it("replays one handler only of a dead letter, by the handler's state the inbox kept, and refuses a name it does not hold", async () => {
      await makeDeadLetters(inbox, [issuedDelivery('evt_1')], 1);
      expect((await inbox.deadLetters())[0]?.handlers).toMatchObject({ crmSync: { ok: false } });
      const { url, origin, logger } = await mounted();
      const page = await (await fetch(`${url}/dead-letters/evt_1`)).text();
      expect(page.match(/data-testid="replay-handler"/g)).toHaveLength(1);
      const token = await pageToken(url);
      expect(
        (await post(`${url}/actions/replay`, { id: 'evt_1', handler: 'nobody', token }, { origin })).status,
      ).toBe(400);
      expect((await inbox.status()).dead).toBe(1);
      const done = await post(
        `${url}/actions/replay`,
        { id: 'evt_1', handler: 'crmSync', token },
        { origin },
      );
      expect(done.status).toBe(303);
      const status = await inbox.status();
      expect([status.dead, status.waiting]).toEqual([0, 1]);
      expect(logger.records.filter((r) => r.level === 'info').map((r) => r.meta)).toEqual([
        { identity: 'ada@example.com', action: 'replay', eventId: 'evt_1', handler: 'crmSync', replayed: 1 },
      ]);
    });

    it('a bulk replay asks for confirmation first and replays only once confirmed', async () => {
      await makeDeadLetters(
        inbox,
        [issuedDelivery('evt_1'), issuedDelivery('evt_2'), issuedDelivery('evt_3')],
        3,
      );
      const { url, origin, logger } = await mounted();
      const token = await pageToken(url);
      const asked = await post(
        `${url}/actions/replay`,
        { type: 'ag.access_pass.issued', since: '', token },
        { origin },
      );
      expect(asked.status).toBe(200);
      const confirm = await asked.text();
      expect(confirm).toContain('Put back every dead letter of type ag.access_pass.issued');
      expect((await inbox.status()).dead).toBe(3);
      const confirmToken = /name="token" value="([^"]+)"/.exec(confirm)?.[1] as string;
      const done = await post(
        `${url}/actions/replay`,
        { type: 'ag.access_pass.issued', since: '', confirmed: 'yes', token: confirmToken },
        { origin },
      );
      expect([done.status, done.headers.get('location')]).toEqual([303, '/ops/?done=replay-started']);
      // It runs on the server; the overview shows how far it came.
      await eventually('the replay done', async () =>
        (await (await fetch(`${url}/`)).text()).includes('replayed 3 of 3; done'),
      );
      const status = await inbox.status();
      expect([status.dead, status.waiting]).toEqual([0, 3]);
      expect(logger.messages('info')).toEqual([
        '[service-webhooks] inbox console: ada@example.com started replaying every dead letter of type ag.access_pass.issued',
        '[service-webhooks] inbox console: ada@example.com replayed every dead letter of type ag.access_pass.issued: 3 of 3',
      ]);
    });

    it('a bad since is refused with 400 and nothing is replayed', async () => {
      await makeDeadLetters(inbox, [issuedDelivery('evt_1')], 1);
      const { url, origin } = await mounted();
      const answer = await post(
        `${url}/actions/replay`,
        { since: 'yesterday', confirmed: 'yes', token: await pageToken(url) },
        { origin },
      );
      expect(answer.status).toBe(400);
      expect((await inbox.status()).dead).toBe(1);
    });

    it('pauses and resumes the queue, shown on the page, logged with the identity', async () => {
      const { url, origin, logger } = await mounted();
      const paused = await post(`${url}/actions/pause`, { token: await pageToken(url) }, { origin });
      expect([paused.status, paused.headers.get('location')]).toEqual([303, '/ops/?done=paused']);
      expect((await inbox.status()).paused).toBe(true);
      const page = await (await fetch(`${url}/`)).text();
      expect(page).toContain('data-testid="resume"');
      expect(page).toContain('paused: no worker starts a try');
      const resumed = await post(`${url}/actions/resume`, { token: await pageToken(url) }, { origin });
      expect(resumed.status).toBe(303);
      expect((await inbox.status()).paused).toBe(false);
      expect(
        logger.records.filter((r) => r.level === 'info').map((r) => [r.meta.identity, r.meta.action]),
      ).toEqual([
        ['ada@example.com', 'pause'],
        ['ada@example.com', 'resume'],
      ]);
    });

    it('actions are POST only and pages GET only', async () => {
      const { url } = await mounted();
      expect((await fetch(`${url}/actions/pause`)).status).toBe(405);
      expect((await fetch(`${url}/`, { method: 'POST' })).status).toBe(405);
      expect((await inbox.status()).paused).toBe(false);
    });
  });

  describe('what an event holds is rendered as text', () => {
    beforeEach(
      () => makeDeadLetters(inbox, [issuedDelivery('evt_hostile', HOSTILE)], 1, '<b>boom</b>\u202E'),
      60_000,
    );

    it.each(['/', '/dead-letters', '/dead-letters/evt_hostile?type=ag.access_pass.issued'])(
      '%s holds no markup or control character from the event, only its escaped text',
      async (path) => {
        const { url } = await mounted();
        const html = await (await fetch(`${url}${path}`)).text();
        expect(html).toContain('evt_hostile');
        expect(html).not.toMatch(/<script>window|<img|<b>boom/);
        expect(html).not.toMatch(/<[^>]*\son[a-z]+\s*=/i);
        expect(html).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
        expect(html).toContain('&lt;b&gt;boom&lt;/b&gt;\\u202e');
        if (path.startsWith('/dead-letters/')) {
          expect(html).toContain('&lt;script&gt;window.__owned = 1&lt;/script&gt;');
          expect(html).toContain('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;');
          expect(html).toContain('evil\\u202egpj.exe');
        }
      },
    );

    it("an issue's masked error is text on its row and on its replay's confirmation", async () => {
      const { url } = await mounted();
      const overview = await (await fetch(`${url}/`)).text();
      expect(overview.match(/data-testid="replay-issue"/g)).toHaveLength(1);
      const [issue] = await inbox.issues();
      const asked = await post(
        `${url}/actions/replay`,
        { issue: issue!.key, token: await pageToken(url) },
        {},
      );
      const confirm = await asked.text();
      for (const html of [overview, confirm]) {
        expect(html).not.toMatch(/<b>boom|[\u202A-\u202E\u2066-\u2069]/);
        expect(html).toContain('Error: &lt;b&gt;boom&lt;/b&gt;\\u202e');
      }
      expect((await inbox.status()).dead).toBe(1);
      // Replayed: the progress section says which issue, as text, in the first paint and the stream.
      const confirmToken = /name="token" value="([^"]+)"/.exec(confirm)?.[1] as string;
      const stream = await fetch(`${url}/stream`);
      const started = await post(
        `${url}/actions/replay`,
        { issue: issue!.key, confirmed: 'yes', token: confirmToken },
        {},
      );
      expect(started.status).toBe(303);
      let after = '';
      await eventually('the replay done', async () => {
        after = await (await fetch(`${url}/`)).text();
        return after.includes('replayed 1 of 1; done');
      });
      expect(after).toContain('Error: &lt;b&gt;boom&lt;/b&gt;\\u202e: replayed 1 of 1; done');
      expect(after).not.toMatch(/<b>boom|[\u202A-\u202E\u2066-\u2069]/);
      const reader = stream.body!.getReader();
      let events = '';
      while (!events.includes('"state":"done"'))
        events += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      expect(events).toContain('"words":"Replay of the dead letters of the issue ag.access_pass.issued');
      expect(events).toContain('boom</b>\\\\u202e: replayed 1 of 1; done"');
      expect(events).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
    });

    it('every page is served under a CSP that allows only our own script file, and has no inline script or handler', async () => {
      const { url } = await mounted();
      for (const path of ['/', '/dead-letters', '/dead-letters/evt_hostile']) {
        const answer = await fetch(`${url}${path}`);
        const csp = answer.headers.get('content-security-policy') ?? '';
        expect(csp).toContain("script-src 'self'");
        expect(csp).toContain("default-src 'none'");
        expect(csp).toContain("frame-ancestors 'none'");
        expect(csp).not.toContain('unsafe');
        const html = await answer.text();
        expect(html.match(/<script[^>]*>/g)).toEqual(['<script src="/ops/assets/console.js">']);
        // Inside a tag: the event's own text (escaped) may well say onerror=.
        expect(html).not.toMatch(/<[^>]*\s(on[a-z]+|style)\s*=|javascript:/i);
      }
    });
  });

  it(`holds at most ${MAX_STREAMS_PER_CLIENT} live streams per client; a closed one frees its place`, async () => {
    const { url } = await mounted();
    const streams = await Promise.all(
      Array.from({ length: MAX_STREAMS_PER_CLIENT }, async () => {
        const stop = new AbortController();
        const answer = await fetch(`${url}/stream`, { signal: stop.signal });
        const reader = answer.body!.getReader();
        const first = new TextDecoder().decode((await reader.read()).value);
        return { answer, stop, first };
      }),
    );
    expect(streams.map((s) => [s.answer.status, s.first.startsWith('event: status\ndata: {')])).toEqual(
      streams.map(() => [200, true]),
    );
    const refused = await fetch(`${url}/stream`);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    streams[0]!.stop.abort();
    let again = 503;
    for (let i = 0; i < 40 && again === 503; i++) {
      const answer = await fetch(`${url}/stream`, { signal: AbortSignal.timeout(2_000) }).catch(
        () => undefined,
      );
      again = answer?.status ?? 0;
      if (again === 200) await answer!.body!.cancel();
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(again).toBe(200);
    for (const s of streams.slice(1)) s.stop.abort();
  });

  it('pages by cursor through every dead letter once, each page one read of 51 however deep, and opens the deepest by its link', async () => {
    const seeded = 2 * PAGE_SIZE + 20;
    await seedDeadLetters(bullmqEngine, server.url, inbox.name, seeded, 'p');
    const reads: Record<string, unknown>[] = [];
    const counted = new Proxy(inbox, {
      get(target, property) {
        if (property === 'deadLetters')
          return (query: Record<string, unknown>) => {
            reads.push(query);
            return target.deadLetters(query);
          };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const { url, origin } = await mounted({ inbox: counted });
    const rows = (html: string) =>
      [...html.matchAll(/data-testid="dead-letter" data-event-id="([^"]+)"/g)].map((m) => m[1]);
    const link = (html: string, testId: string) => {
      const href = new RegExp(`href="([^"]+)" data-testid="${testId}"`).exec(html)?.[1];
      return href === undefined ? undefined : `${origin}${href.replaceAll('&amp;', '&')}`;
    };
    const pages: string[] = [];
    let next: string | undefined = `${url}/dead-letters`;
    for (let i = 0; next !== undefined && i < 10; i++) {
      const html = await (await fetch(next)).text();
      pages.push(html);
      next = link(html, 'next-page');
    }
    const seen = pages.flatMap(rows);
    expect(pages.map((p) => rows(p).length)).toEqual([PAGE_SIZE, PAGE_SIZE, 20]);
    expect(seen).toHaveLength(seeded);
    expect(new Set(seen).size).toBe(seeded);
    expect(reads.map((r) => r.limit)).toEqual([PAGE_SIZE + 1, PAGE_SIZE + 1, PAGE_SIZE + 1]);
    expect(pages[0]).not.toContain('data-testid="prev-page"');
    expect(pages[0]).toContain(`${PAGE_SIZE} of the ${seeded} dead letters, newest first, from the newest.`);
    // Back from the oldest page: the newer pages again, the same rows.
    const back = await (await fetch(link(pages[2]!, 'prev-page')!)).text();
    expect(rows(back)).toEqual(rows(pages[1]!));
    const newest = await (await fetch(link(back, 'prev-page')!)).text();
    expect(rows(newest)).toEqual(rows(pages[0]!));
    expect(newest).not.toContain('data-testid="prev-page"');
    // The oldest dead letter, past the newest 100, opened by its link: one read of one after a cursor.
    const deepest = seen.at(-1)!;
    const href = new RegExp(`href="([^"]+)"><code>${deepest}</code>`).exec(pages[2]!)?.[1];
    reads.length = 0;
    const one = await fetch(`${origin}${href!.replaceAll('&amp;', '&')}`);
    expect(one.status).toBe(200);
    expect(await one.text()).toContain(`data-testid="event-id">${deepest}<`);
    expect(reads).toEqual([{ limit: 1, type: 'ag.access_pass.issued', after: expect.any(String) }]);
    expect((await fetch(`${url}/dead-letters/evt_nope`)).status).toBe(404);
    expect((await fetch(`${url}/dead-letters?after=garbage!`)).status).toBe(400);
  });

  it('works as Express middleware under its mount path', async () => {
    const handler = inboxConsole({ inbox, authorize: () => true, logger: false });
    consoles.push(handler);
    const app = express();
    app.use('/ops/webhooks', handler);
    const served = await listen(app);
    closing.push(served.close);
    const html = await (await fetch(`${served.url}/ops/webhooks/`)).text();
    expect(html).toContain('<script src="/ops/webhooks/assets/console.js">');
    expect((await fetch(`${served.url}/ops/webhooks/status`)).status).toBe(200);
  });
});
