import http from 'node:http';
import { ConsoleApiError, ConsoleClient, ConsoleValidationError } from '../lib/console';
import { OptionsError } from '../lib/options-error';
import { listen } from './support/listen';

const SECRET = 'sk_hardening_secret_51f0';

/** A server that counts what it receives and answers with `answer`. */
async function server(answer: (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void) {
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders }[] = [];
  const running = await listen((req: http.IncomingMessage, res: http.ServerResponse) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => answer(req, res, seen.length));
  });
  return { ...running, seen };
}

const clientFor = (baseUrl: string, timeoutMs = 5000) =>
  new ConsoleClient({ baseUrl, accountId: 'acct_1', secretKey: SECRET, timeoutMs });

const json = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

describe('ConsoleClient never follows a redirect (issue 10, item 14)', () => {
  const calls: [string, (c: ConsoleClient) => Promise<unknown>][] = [
    ['listWebhooks', (c) => c.listWebhooks()],
    ['deleteWebhook', (c) => c.deleteWebhook('wh_1')],
    ['verifyWebhook', (c) => c.verifyWebhook('wh_1')],
    [
      'createWebhook',
      (c) =>
        c.createWebhook({ name: 'n', url: 'https://x.test/h', subscribedEvents: ['ag.hid_org.created'] }),
    ],
  ];
  const cases = [301, 302, 303, 307, 308].flatMap((status) =>
    calls.map(([name, call]) => [status, name, call] as const),
  );
  it.each(cases)(
    'a %d answer to %s is an error, and the signed headers go nowhere else',
    async (status, _n, call) => {
      const elsewhere = await server((_req, res) => json(res, 200, []));
      const redirecting = await server((_req, res) => {
        res.writeHead(status, { Location: `${elsewhere.url}/v1/console/webhooks` });
        res.end();
      });
      try {
        const error = (await call(clientFor(redirecting.url)).catch((e: unknown) => e)) as ConsoleApiError;
        expect(error).toBeInstanceOf(ConsoleApiError);
        expect(error.status).toBe(status);
        expect(error.message).toMatch(/redirects are not followed/);
        expect(redirecting.seen).toHaveLength(1);
        expect(elsewhere.seen).toEqual([]);
      } finally {
        await Promise.all([elsewhere.close(), redirecting.close()]);
      }
    },
  );

  it.each(['http://example.com', 'http://10.0.0.7:8080', 'http://console.internal/api', 'ftp://example.com'])(
    'refuses baseUrl %s at construction',
    (baseUrl) => {
      expect(() => clientFor(baseUrl)).toThrow(OptionsError);
      expect(() => clientFor(baseUrl)).toThrow(/baseUrl must/);
    },
  );

  it.each([
    'http://localhost:4010',
    'http://127.0.0.1:1',
    'http://127.8.9.10',
    'http://[::1]:4010',
    'https://x.test',
  ])('takes baseUrl %s', (baseUrl) => {
    expect(() => clientFor(baseUrl)).not.toThrow();
  });
});

describe('waitUntilVerified keeps its deadline inside pagination (issue 10, item 15)', () => {
  let counter = 0;
  const fullPage = () =>
    Array.from({ length: 100 }, () => ({ id: `wh_${++counter}`, name: 'n', verified: false }));

  it('rejects at its deadline against a server that always answers a new full page', async () => {
    // Each page answers after 2 ms, so the 1000-page cap lies past 2 s whatever the machine's speed:
    // only the 500 ms deadline can end the wait.
    const endless = await server((_req, res) => void setTimeout(() => json(res, 200, fullPage()), 2));
    try {
      const started = Date.now();
      await expect(clientFor(endless.url).waitUntilVerified('wh_never', { timeoutMs: 500 })).rejects.toThrow(
        'webhook wh_never not verified after 500 ms',
      );
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      await endless.close();
    }
  });

  it('cuts a list request short at the deadline, not at the client timeout', async () => {
    const silent = await server(() => undefined);
    try {
      const started = Date.now();
      await expect(
        clientFor(silent.url, 10_000).waitUntilVerified('wh_1', { timeoutMs: 300 }),
      ).rejects.toThrow('not verified after 300 ms');
      expect(Date.now() - started).toBeLessThan(1500);
    } finally {
      await silent.close();
    }
  });

  it('stops on a page seen before (a server that ignores page)', async () => {
    const page = fullPage();
    const same = await server((_req, res) => json(res, 200, page));
    try {
      const ids: string[] = [];
      for await (const webhook of clientFor(same.url).iterateWebhooks()) ids.push(webhook.id);
      expect(ids).toHaveLength(100);
      expect(same.seen).toHaveLength(2);
      await expect(clientFor(same.url).waitUntilVerified('wh_other', { timeoutMs: 2000 })).rejects.toThrow(
        'is not on this account',
      );
    } finally {
      await same.close();
    }
  });

  it('gives up past 1000 pages', async () => {
    const endless = await server((_req, res) => json(res, 200, [{ id: `wh_${++counter}`, name: 'n' }]));
    try {
      let count = 0;
      const walk = async () => {
        for await (const _ of clientFor(endless.url).iterateWebhooks({ perPage: 1 })) count++;
      };
      await expect(walk()).rejects.toThrow(/went on past 1000 pages/);
      expect(count).toBe(1000);
      expect(endless.seen).toHaveLength(1000);
    } finally {
      await endless.close();
    }
  }, 30_000);
});

describe('ids that are not one path segment are refused before sending (issue 10, item 16)', () => {
  const sent: string[] = [];
  const client = new ConsoleClient({
    baseUrl: 'https://service.example',
    accountId: 'a',
    secretKey: SECRET,
    fetch: async (input) => {
      sent.push(String(input));
      return new Response('[]', { status: 200 });
    },
  });
  afterEach(() => expect(sent).toEqual([]));

  const ids = ['', '.', '..', 'a/b', '../x', 'a\\b', '%2e%2e', 'a?b', 'a#b', 'a b', 'a\nb', 'x'.repeat(257)];
  const methods = ['deleteWebhook', 'verifyWebhook', 'waitUntilVerified'] as const;
  it.each(methods.flatMap((method) => ids.map((id) => [method, id] as const)))(
    '%s refuses %j',
    async (method, id) => {
      const error = (await client[method](id).catch((e: unknown) => e)) as ConsoleValidationError;
      expect(error).toBeInstanceOf(ConsoleValidationError);
      expect(error.field).toBe('id');
      expect(error.message).toMatch(/^\[service-webhooks\] ConsoleClient\.\w+: id must/);
    },
  );
});
