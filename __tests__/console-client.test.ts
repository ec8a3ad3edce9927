import http from 'node:http';
import {
  ConsoleApiError,
  ConsoleClient,
  ConsoleNetworkError,
  ConsoleValidationError,
  signPayload,
} from '../lib/console';
import { OptionsError } from '../lib';
import { listen } from './support/listen';

const SECRET = 'sk_console_secret_9d8c7b';

interface Received {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A bare server that records exactly what it receives and answers as told. */
async function recorder(answer: (req: Received) => [number, unknown] = () => [200, []]) {
  const received: Received[] = [];
  const server = await listen((req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = {
        method: req.method ?? '',
        url: new URL(req.url ?? '/', 'http://x'),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      received.push(entry);
      const [status, body] = answer(entry);
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(body === undefined ? '' : JSON.stringify(body));
    });
  });
  const client = new ConsoleClient({
    baseUrl: server.url,
    accountId: 'acct_1',
    secretKey: SECRET,
    timeoutMs: 2000,
  });
  return { received, client, server };
}

describe('ConsoleClient on the wire', () => {
  it('signs the exact JSON body it sends on POST, in snake_case', async () => {
    const { received, client, server } = await recorder(() => [
      201,
      {
        id: 'wh_1',
        name: 'n',
        verified: false,
        private_key: 'pk_1',
        auth_method: 'bearer_token',
        subscribed_events: ['ag.hid_org.created'],
      },
    ]);
    try {
      const created = await client.createWebhook({
        name: 'Front door',
        url: 'https://example.com/hook',
        subscribedEvents: ['ag.hid_org.created'],
      });
      expect(created).toEqual({
        id: 'wh_1',
        name: 'n',
        verified: false,
        privateKey: 'pk_1',
        authMethod: 'bearer_token',
        subscribedEvents: ['ag.hid_org.created'],
      });
      const [req] = received;
      expect(req?.method).toBe('POST');
      expect(req?.url.pathname).toBe('/v1/console/webhooks');
      expect(JSON.parse(req?.body ?? '')).toEqual({
        name: 'Front door',
        url: 'https://example.com/hook',
        auth_method: 'bearer_token',
        subscribed_events: ['ag.hid_org.created'],
      });
      expect(req?.headers['content-type']).toBe('application/json');
      expect(req?.headers['x-acct-id']).toBe('acct_1');
      expect(req?.headers['x-payload-sig']).toBe(signPayload(req?.body ?? '', SECRET));
      expect(JSON.stringify(req)).not.toContain(SECRET);
    } finally {
      await server.close();
    }
  });

  it('sends GET with sig_payload {} in the query and its signature, plus page and per_page', async () => {
    const { received, client, server } = await recorder(() => [200, []]);
    try {
      await client.listWebhooks({ page: 3, perPage: 20 });
      const [req] = received;
      expect(req?.method).toBe('GET');
      expect(req?.url.searchParams.get('sig_payload')).toBe('{}');
      expect(req?.url.searchParams.get('page')).toBe('3');
      expect(req?.url.searchParams.get('per_page')).toBe('20');
      expect(req?.headers['x-payload-sig']).toBe(signPayload('{}', SECRET));
      expect(req?.body).toBe('');
    } finally {
      await server.close();
    }
  });

  it('sends DELETE with sig_payload and an encoded id, and POST verify with a signed {} body', async () => {
    const { received, client, server } = await recorder((req) =>
      req.method === 'DELETE' ? [204, undefined] : [202, { id: 'wh:1@x', verified: false }],
    );
    try {
      await client.deleteWebhook('wh:1@x');
      expect(await client.verifyWebhook('wh:1@x')).toEqual({ id: 'wh:1@x', verified: false, status: 202 });
      const [del, verify] = received;
      expect(del?.url.pathname).toBe('/v1/console/webhooks/wh%3A1%40x');
      expect(del?.url.searchParams.get('sig_payload')).toBe('{}');
      expect(del?.headers['x-payload-sig']).toBe(signPayload('{}', SECRET));
      expect(verify?.url.pathname).toBe('/v1/console/webhooks/wh%3A1%40x/verify');
      expect(verify?.body).toBe('{}');
      expect(verify?.headers['x-payload-sig']).toBe(signPayload('{}', SECRET));
    } finally {
      await server.close();
    }
  });

  it.each<[string, unknown, { ids: string[]; totalCount: number | null; hasMore: boolean }]>([
    [
      'a bare array (a full page: more may follow)',
      [{ id: 'a', name: 'A', verified: true }],
      { ids: ['a'], totalCount: null, hasMore: true },
    ],
    [
      'an object with webhooks',
      { webhooks: [{ id: 'a', name: 'A', verified: true }], total_count: 3, page: 1, per_page: 1 },
      { ids: ['a'], totalCount: 3, hasMore: true },
    ],
    [
      'an object with data and pagination',
      {
        data: [{ id: 'b', name: 'B', verified: false }],
        pagination: { page: 2, per_page: 1, total_pages: 2 },
      },
      { ids: ['b'], totalCount: null, hasMore: false },
    ],
    [
      'an object with data and meta',
      { data: [{ id: 'c', name: 'C', verified: false }], meta: { total: 1 } },
      { ids: ['c'], totalCount: 1, hasMore: false },
    ],
  ])('reads the list from %s', async (_name, body, expected) => {
    const { client, server } = await recorder(() => [200, body]);
    try {
      const page = await client.listWebhooks({ perPage: 1, page: _name.includes('pagination') ? 2 : 1 });
      expect(page.webhooks.map((w) => w.id)).toEqual(expected.ids);
      expect(page.totalCount).toBe(expected.totalCount);
      expect(page.hasMore).toBe(expected.hasMore);
    } finally {
      await server.close();
    }
  });

  it('rejects a list answer with no array, saying what was expected', async () => {
    const { client, server } = await recorder(() => [200, { items: [] }]);
    try {
      await expect(client.listWebhooks()).rejects.toThrow(/no webhooks array/);
    } finally {
      await server.close();
    }
  });

  it('iterates every webhook across pages', async () => {
    const all = Array.from({ length: 5 }, (_, i) => ({
      id: `wh_${i}`,
      name: `n${i}`,
      verified: i % 2 === 0,
    }));
    const { client, server, received } = await recorder((req) => {
      const page = Number(req.url.searchParams.get('page'));
      const perPage = Number(req.url.searchParams.get('per_page'));
      return [200, all.slice((page - 1) * perPage, page * perPage)];
    });
    try {
      const ids: string[] = [];
      for await (const webhook of client.iterateWebhooks({ perPage: 2 })) ids.push(webhook.id);
      expect(ids).toEqual(all.map((w) => w.id));
      expect(received.map((r) => r.url.searchParams.get('page'))).toEqual(['1', '2', '3']);
    } finally {
      await server.close();
    }
  });

  it('wraps an error status in ConsoleApiError with the status and parsed body, never the secret', async () => {
    const problem = { type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'bad signature' };
    const { client, server } = await recorder(() => [401, problem]);
    try {
      const error = (await client.listWebhooks().catch((e: unknown) => e)) as ConsoleApiError;
      expect(error).toBeInstanceOf(ConsoleApiError);
      expect(error).toMatchObject({
        status: 401,
        body: problem,
        method: 'GET',
        path: '/v1/console/webhooks',
      });
      expect(error.message).toBe(
        '[service-webhooks] console GET /v1/console/webhooks answered 401: bad signature',
      );
      expect(JSON.stringify({ ...error, message: error.message, stack: error.stack })).not.toContain(SECRET);
    } finally {
      await server.close();
    }
  });

  it('wraps a refused connection in ConsoleNetworkError with the method and path', async () => {
    const { server } = await recorder();
    await server.close();
    const client = new ConsoleClient({ baseUrl: server.url, accountId: 'a', secretKey: SECRET });
    const error = (await client.deleteWebhook('wh_1').catch((e: unknown) => e)) as ConsoleNetworkError;
    expect(error).toBeInstanceOf(ConsoleNetworkError);
    expect(error.message).toBe(
      '[service-webhooks] console DELETE /v1/console/webhooks/wh_1 failed: ECONNREFUSED; check baseUrl and the network',
    );
    expect(String(error.stack)).not.toContain(SECRET);
  });

  it('wraps a timeout in ConsoleNetworkError', async () => {
    const server = await listen(() => undefined);
    try {
      const client = new ConsoleClient({
        baseUrl: server.url,
        accountId: 'a',
        secretKey: SECRET,
        timeoutMs: 100,
      });
      await expect(client.verifyWebhook('wh_1')).rejects.toThrow('failed: no answer within 100 ms');
    } finally {
      await server.close();
    }
  });

  it('refuses an answer over 4 MiB without buffering it', async () => {
    let sent = 0;
    const huge = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += 1024 * 1024;
        controller.enqueue(new Uint8Array(1024 * 1024).fill(0x20));
      },
    });
    const client = new ConsoleClient({
      baseUrl: 'https://service.example',
      accountId: 'a',
      secretKey: SECRET,
      fetch: async () => new Response(huge),
    });
    await expect(client.listWebhooks()).rejects.toThrow('failed: the answer is over 4194304 bytes');
    expect(sent).toBeLessThanOrEqual(6 * 1024 * 1024);
  });

  it('refuses a create answer without private_key, rather than return a webhook with no token', async () => {
    const { client, server } = await recorder(() => [201, { id: 'wh_1', name: 'n', verified: false }]);
    try {
      const error = (await client
        .createWebhook({ name: 'n', url: 'https://x.test/h', subscribedEvents: ['ag.hid_org.created'] })
        .catch((e: unknown) => e)) as ConsoleApiError;
      expect(error).toBeInstanceOf(ConsoleApiError);
      expect(error.message).toMatch(/carries no private_key/);
    } finally {
      await server.close();
    }
  });

  it('uses an injected fetch', async () => {
    const calls: string[] = [];
    const fake: typeof fetch = async (input) => {
      calls.push(String(input));
      return new Response('[]', { status: 200 });
    };
    const client = new ConsoleClient({
      baseUrl: 'https://service.example/',
      accountId: 'a',
      secretKey: SECRET,
      fetch: fake,
    });
    await client.listWebhooks();
    expect(calls).toEqual([
      'https://service.example/v1/console/webhooks?page=1&per_page=50&sig_payload=%7B%7D',
    ]);
  });
});

describe('ConsoleClient validation, before any request', () => {
  const sent: string[] = [];
  const client = new ConsoleClient({
    baseUrl: 'https://service.example',
    accountId: 'a',
    secretKey: SECRET,
    fetch: async (input) => {
      sent.push(String(input));
      return new Response('{}', { status: 200 });
    },
  });
  afterEach(() => expect(sent).toEqual([]));

  const good = { name: 'n', url: 'https://example.com/h', subscribedEvents: ['ag.hid_org.created'] as const };
  it.each<[string, Record<string, unknown>, string]>([
    ['an empty name', { name: ' ' }, 'name'],
    ['a relative url', { url: '/hook' }, 'url'],
    ['plain http to a remote host', { url: 'http://example.com/hook' }, 'url'],
    ['an ftp url', { url: 'ftp://example.com/hook' }, 'url'],
    ['an unknown authMethod', { authMethod: 'basic' }, 'authMethod'],
    ['no subscribed events', { subscribedEvents: [] }, 'subscribedEvents'],
    ['an unknown event type', { subscribedEvents: ['ag.hid_org.created', 'ag.nope'] }, 'subscribedEvents'],
  ])('createWebhook refuses %s', async (_name, change, field) => {
    const error = (await client
      .createWebhook({ ...good, ...change } as never)
      .catch((e: unknown) => e)) as ConsoleValidationError;
    expect(error).toBeInstanceOf(ConsoleValidationError);
    expect(error.field).toBe(field);
    expect(error.message).toMatch(/^\[service-webhooks\] ConsoleClient\.createWebhook: /);
  });

  it('names the catalogue type a misspelled subscription meant', async () => {
    const error = (await client
      .createWebhook({ ...good, subscribedEvents: ['ag.access_pass.isued'] } as never)
      .catch((e: unknown) => e)) as ConsoleValidationError;
    expect(error.message).toMatch(/"ag\.access_pass\.isued" \(did you mean "ag\.access_pass\.issued"\?\)/);
  });

  it.each([
    ['perPage 101', { perPage: 101 }, 'perPage'],
    ['perPage 0', { perPage: 0 }, 'perPage'],
    ['page 0', { page: 0 }, 'page'],
    ['page 1.5', { page: 1.5 }, 'page'],
  ])('listWebhooks refuses %s', async (_name, options, field) => {
    await expect(client.listWebhooks(options)).rejects.toMatchObject({
      name: 'ConsoleValidationError',
      field,
    });
  });

  it.each(['deleteWebhook', 'verifyWebhook', 'waitUntilVerified'] as const)(
    '%s refuses an empty id',
    async (method) => {
      await expect(client[method]('')).rejects.toMatchObject({ field: 'id' });
    },
  );

  it('allows plain http to localhost', async () => {
    const local = new ConsoleClient({
      baseUrl: 'http://127.0.0.1:1',
      accountId: 'a',
      secretKey: SECRET,
      fetch: async () =>
        new Response('{"id":"w","name":"n","verified":false,"private_key":"pk"}', { status: 201 }),
    });
    await expect(local.createWebhook({ ...good, url: 'http://localhost:3000/hook' })).resolves.toMatchObject({
      id: 'w',
    });
  });

  it.each([
    ['no baseUrl', { accountId: 'a', secretKey: 's' }],
    ['a relative baseUrl', { baseUrl: '/api', accountId: 'a', secretKey: 's' }],
    ['no accountId', { baseUrl: 'https://x', secretKey: 's' }],
    ['an empty secretKey', { baseUrl: 'https://x', accountId: 'a', secretKey: '' }],
    ['a zero timeout', { baseUrl: 'https://x', accountId: 'a', secretKey: 's', timeoutMs: 0 }],
  ])('the constructor throws for %s', (_name, options) => {
    expect(() => new ConsoleClient(options as never)).toThrow(OptionsError);
  });
});
