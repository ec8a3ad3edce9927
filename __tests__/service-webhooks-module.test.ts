import http from 'node:http';
import { Inject, Injectable, Module, Scope, type INestApplication, type Type } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { createEventRouter, type HandlerContext } from 'service-webhooks';
import type { ServiceEvent } from 'service-webhooks/nestjs';
import { OnServiceEvent, ServiceWebhooks, ServiceWebhooksModule } from 'service-webhooks/nestjs';
import { BullModule, InjectQueue, OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job, Queue } from 'bullmq';
import { bullmqInbox } from 'service-webhooks/bullmq';
import { deliverEvent } from 'service-webhooks/testing';
import { Redis } from 'ioredis';
import { binaryMode, delivery, issued, TOKEN } from './support/contract-rows';
import { DEMO_TOKEN, playDemoScenario } from './support/demo-scenario';
import { overHttp, PATH } from './support/doors';
import { startNestApp, type NestPlatform } from './support/nest-doors';
import { pollUntil } from './support/poll-until';
import { describeWithRedis, startRedisServer, type RedisServer } from './support/redis-server';
import { allBlocks, runBlocks } from './support/readme-blocks';

const PLATFORMS: readonly NestPlatform[] = ['express', 'fastify'];

/** What the handlers saw, shared with the test through Nest's injector. */
const SEEN = Symbol('seen');

@Injectable()
class PassHandlers {
  constructor(@Inject(SEEN) readonly seen: string[]) {}

  @OnServiceEvent('ag.access_pass.issued')
  onIssued(event: ServiceEvent<'ag.access_pass.issued'>) {
    this.seen.push(`issued ${event.id}`);
  }

  @OnServiceEvent('ag.access_pass.*')
  @OnServiceEvent('ag.card_template.created')
  onFamily(event: ServiceEvent<'ag.access_pass.*' | 'ag.card_template.created'>) {
    this.seen.push(`family ${event.type}`);
  }
}

/**
 * The demo's handlers (demo-app/demo-receiver.ts) as a Nest provider: the template method fails the
 * first time it sees an event marked `fail_once`, as the demo's does; the other counts every family.
 */
@Injectable()
class DemoHandlers {
  readonly handled = new Map<string, number>();
  readonly #failed = new Set<string>();

  @OnServiceEvent('ag.card_template.*')
  onTemplate(event: ServiceEvent<'ag.card_template.*'>) {
    if (event.data.metadata.fail_once === true && !this.#failed.has(event.id)) {
      this.#failed.add(event.id);
      throw new Error('template store briefly unavailable');
    }
    this.#count(event.id);
  }

  @OnServiceEvent([
    'ag.access_pass.*',
    'ag.card_template_pair.*',
    'ag.landing_page.*',
    'ag.credential_profile.*',
    'ag.hid_org.*',
    'ag.account_balance.*',
    'ag.webhook.*',
  ])
  onOther(event: { id: string }) {
    this.#count(event.id);
  }

  #count(id: string) {
    this.handled.set(id, (this.handled.get(id) ?? 0) + 1);
  }
}

function appModule(seen: string[], options: Record<string, unknown> = {}) {
  return {
    imports: [ServiceWebhooksModule.forRoot({ bearerTokens: [TOKEN], logger: false, ...options })],
    providers: [PassHandlers, { provide: SEEN, useValue: seen }],
  };
}

/** A request whose head and first bytes are sent, and whose body never ends until `end()`. */
function unfinishedRequest(url: string, headers: Record<string, string>) {
  const request = http.request(url, {
    method: 'POST',
    headers: { ...headers, 'content-length': '1000' },
  });
  request.on('error', () => undefined);
  const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
    const bound = setTimeout(
      () => reject(new Error('no answer within 5 s while the body was unfinished')),
      5000,
    );
    request.on('response', (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => {
        clearTimeout(bound);
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
  });
  request.write('{"challenge"');
  return { answered, end: () => request.destroy() };
}

describe.each(PLATFORMS)('ServiceWebhooksModule on Nest %s', (platform) => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('runs the @OnServiceEvent methods of a provider with it as `this`, once per decorator that matches', async () => {
    const seen: string[] = [];
    const started = await startNestApp(platform, appModule(seen));
    app = started.app;
    const answer = await overHttp(started.url + PATH, delivery(issued({}, 'evt_nest')));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ status: 'processed' });
    expect(seen.sort()).toEqual(['family ag.access_pass.issued', 'issued evt_nest']);
  });

  it("meets every expectation of the demo's scenario file, each event handled once by the decorated methods", async () => {
    const started = await startNestApp(platform, {
      imports: [ServiceWebhooksModule.forRoot({ bearerTokens: [DEMO_TOKEN], logger: false })],
      providers: [DemoHandlers],
    });
    app = started.app;
    const receiver = app.get(ServiceWebhooks);
    const { handled } = app.get(DemoHandlers);
    await playDemoScenario(started.url, PATH, handled, () => receiver.drain());
  });

  it('names each decorated method by its { name }, else Class.method: two providers with a method of one name are two handlers', async () => {
    const ran: string[] = [];
    const failures: string[] = [];
    @Injectable()
    class Crm {
      @OnServiceEvent('ag.access_pass.issued')
      handle(_event: unknown, ctx: HandlerContext) {
        ran.push(ctx.handler);
      }
    }
    @Injectable()
    class Mailer {
      private failed = false;

      @OnServiceEvent('ag.access_pass.issued')
      handle(_event: unknown, ctx: HandlerContext) {
        // Fails the first delivery, so the retry shows which handlers' success was recorded.
        if (!this.failed) {
          this.failed = true;
          throw new Error('mail server briefly down');
        }
        ran.push(ctx.handler);
      }
    }
    @Injectable()
    class Audit {
      @OnServiceEvent('ag.access_pass.*', { name: 'audit-log' })
      record(_event: unknown, ctx: HandlerContext) {
        ran.push(ctx.handler);
      }
    }
    const started = await startNestApp(platform, {
      imports: [
        ServiceWebhooksModule.forRoot({
          bearerTokens: [TOKEN],
          logger: false,
          router: createEventRouter().onError((_error, _event, ctx) => void failures.push(ctx.handler)),
        }),
      ],
      providers: [Crm, Mailer, Audit],
    });
    app = started.app;
    const first = await overHttp(started.url + PATH, delivery(issued({}, 'evt_named')));
    expect(first.status).toBe(500);
    expect(failures).toEqual(['Mailer.handle']);
    expect(ran.sort()).toEqual(['Crm.handle', 'audit-log']);
    // The Service's retry runs only the handler whose success was not recorded, by its name.
    const retry = await overHttp(started.url + PATH, delivery(issued({}, 'evt_named')));
    expect([retry.status, JSON.parse(retry.text).status]).toEqual([200, 'processed']);
    expect(ran.sort()).toEqual(['Crm.handle', 'Mailer.handle', 'audit-log']);
  });

  it('authenticates before reading the body: a JSON body Nest would parse is refused 401 while unfinished', async () => {
    const seen: string[] = [];
    const started = await startNestApp(platform, appModule(seen));
    app = started.app;
    const { answered, end } = unfinishedRequest(started.url + PATH, {
      'content-type': 'application/json',
      'ce-specversion': '1.0',
    });
    try {
      const answer = await answered;
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body)).toMatchObject({ type: 'urn:service-webhooks:problem:missing-token' });
    } finally {
      end();
    }
    expect(seen).toEqual([]);
  });

  it("applies the receiver's limit, not Nest's body parser's (100 kB), to a binary-mode JSON event", async () => {
    const seen: string[] = [];
    const started = await startNestApp(platform, appModule(seen, { limit: '1mb' }));
    app = started.app;
    const data = JSON.parse(binaryMode.body) as Record<string, unknown>;
    const big = JSON.stringify({ ...data, title: 'x'.repeat(200_000) });
    const answer = await overHttp(started.url + PATH, { headers: binaryMode.headers, body: big });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text)).toMatchObject({ status: 'processed' });
    expect(seen.sort()).toEqual(['family ag.access_pass.issued', 'issued evt_binary']);
  });

  it("runs docs/frameworks.md's module as written: the decorated provider records the event", async () => {
    const block = allBlocks().find((b) => b.file === 'src/webhooks.module.ts');
    if (block === undefined) throw new Error('docs/frameworks.md has no block src/webhooks.module.ts');
    const { AppModule, PassService } = runBlocks([block]).get(block.file) as {
      AppModule: new () => object;
      PassService: new () => { issued: string[] };
    };
    const started = await startNestApp(platform, { imports: [AppModule] });
    app = started.app;
    await deliverEvent(
      started.app.getHttpServer(),
      'ag.access_pass.issued',
      {},
      {
        token: 'tok_local',
        path: PATH,
        id: 'evt_docs',
      },
    ).expect(200);
    expect(started.app.get(PassService).issued).toEqual(['evt_docs']);
  });

  it('leaves every other path to Nest', async () => {
    const started = await startNestApp(platform, appModule([]));
    app = started.app;
    const answer = await overHttp(`${started.url}/elsewhere`, delivery(issued()));
    expect(answer.status).toBe(404);
    expect(answer.text).not.toMatch(/service-webhooks/);
  });

  it('takes its options from forRootAsync, with the token from an injected provider', async () => {
    const seen: string[] = [];
    @Injectable()
    class Config {
      get(key: string) {
        return key === 'WEBHOOK_TOKEN' ? 'tok_from_config' : undefined;
      }
    }
    @Module({ providers: [Config], exports: [Config] })
    class ConfigModule {}
    const started = await startNestApp(platform, {
      imports: [
        ServiceWebhooksModule.forRootAsync({
          imports: [ConfigModule],
          inject: [Config],
          useFactory: async (config: Config) => ({
            bearerTokens: [config.get('WEBHOOK_TOKEN')!],
            logger: false,
          }),
        }),
      ],
      providers: [PassHandlers, { provide: SEEN, useValue: seen }],
    });
    app = started.app;
    const event = issued({}, 'evt_async');
    const refused = await overHttp(started.url + PATH, delivery(event));
    expect(refused.status).toBe(401);
    const answer = await overHttp(
      started.url + PATH,
      delivery(event, { authorization: 'Bearer tok_from_config' }),
    );
    expect(answer.status).toBe(200);
    expect(seen).toContain('issued evt_async');
  });

  it('is tested as Nest apps are: Test.createTestingModule, then the kit against app.getHttpServer()', async () => {
    const seen: string[] = [];
    const moduleRef = await Test.createTestingModule(appModule(seen)).compile();
    const testApp =
      platform === 'express'
        ? moduleRef.createNestApplication({ logger: false })
        : moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    app = testApp;
    await testApp.init();
    if (platform === 'fastify')
      await (testApp as NestFastifyApplication).getHttpAdapter().getInstance().ready();
    await deliverEvent(
      testApp.getHttpServer(),
      'ag.access_pass.issued',
      {},
      { token: TOKEN, path: PATH, id: 'evt_kit' },
    ).expect(200);
    await deliverEvent(testApp.getHttpServer(), 'ag.access_pass.issued', {}, { path: PATH }).expect(401);
    expect(seen).toContain('issued evt_kit');
  });

  it('waits on app.close() for a delivery in flight, which is answered 200', async () => {
    let release: (() => void) | undefined;
    const ran: string[] = [];
    @Injectable()
    class Slow {
      @OnServiceEvent('ag.access_pass.issued')
      async onIssued(event: ServiceEvent<'ag.access_pass.issued'>) {
        await new Promise<void>((resolve) => (release = resolve));
        ran.push(event.id);
      }
    }
    const started = await startNestApp(platform, {
      imports: [ServiceWebhooksModule.forRoot({ bearerTokens: [TOKEN], logger: false })],
      providers: [Slow],
    });
    const answer = overHttp(started.url + PATH, delivery(issued({}, 'evt_closing')));
    // The handler is running once release is set; bounded so a lost request fails here.
    for (let i = 0; i < 200 && release === undefined; i++) await new Promise((r) => setTimeout(r, 10));
    expect(release).toBeDefined();
    const closed = started.app.close();
    release?.();
    await closed;
    expect((await answer).status).toBe(200);
    expect(ran).toEqual(['evt_closing']);
  });
});

describe('ServiceWebhooksModule refuses, at bootstrap', () => {
  /** Compiles a testing module with `provider` and checks that its init is refused with `message`. */
  async function expectBootstrapRefused(provider: Type, message: RegExp): Promise<void> {
    const moduleRef = await Test.createTestingModule({
      imports: [ServiceWebhooksModule.forRoot({ bearerTokens: [TOKEN], logger: false })],
      providers: [provider],
    }).compile();
    await expect(moduleRef.init()).rejects.toThrow(message);
    await moduleRef.close();
  }

  it.each([
    [{ bearerTokens: [TOKEN], pth: '/hooks' }, /unknown option "pth"; did you mean "path"\?/],
    [{ bearerTokens: [TOKEN], path: 'hooks' }, /path must be a string starting with "\/"/],
    [{ bearerTokens: [TOKEN], worker: 3 }, /worker must be the worker options object, or false/],
    [{ bearerTokens: [TOKEN], shutdownTimeoutMs: 0 }, /shutdownTimeoutMs must be a positive number/],
    [{ bearerTokens: [TOKEN], limit: 'lots' }, /limit/],
    [{}, /bearerTokens/],
  ])('options %j', (options, message) => {
    expect(() => ServiceWebhooksModule.forRoot(options as never)).toThrow(message);
    expect(() => ServiceWebhooksModule.forRoot(options as never)).toThrow(/^\[service-webhooks\]/);
  });

  it('forRootAsync options it does not know, and a missing factory', () => {
    expect(() =>
      ServiceWebhooksModule.forRootAsync({ useFactory: () => ({}), injects: [] } as never),
    ).toThrow(/unknown option "injects"; did you mean "inject"\?/);
    expect(() => ServiceWebhooksModule.forRootAsync({} as never)).toThrow(/useFactory must be a function/);
  });

  it('a misspelt event type on a decorated method, naming the method, with the catalogue hint', async () => {
    @Injectable()
    class Misspelt {
      // @ts-expect-error the type is misspelt: it fails to compile, and at bootstrap
      @OnServiceEvent('ag.access_pass.isued')
      onIssued() {}
    }
    await expectBootstrapRefused(
      Misspelt,
      /^\[service-webhooks\] ServiceWebhooksModule: @OnServiceEvent on Misspelt\.onIssued: on: "ag\.access_pass\.isued" is not an event type.*Did you mean "ag\.access_pass\.issued"\?/,
    );
  });

  it.each([
    [{ name: '' }, /@OnServiceEvent on Named\.onIssued: .*name/],
    [{ name: 'a\nb' }, /@OnServiceEvent on Named\.onIssued: .*name/],
    [{ nme: 'crm' }, /@OnServiceEvent on Named\.onIssued: .*unknown option "nme"; did you mean "name"\?/],
    [{ ordering: 'oldest-wins' }, /@OnServiceEvent on Named\.onIssued: .*did you mean "newest-wins"\?/],
  ])('decorator options %j, when the class is defined, naming the method', (options, message) => {
    expect(() => {
      class Named {
        @OnServiceEvent('ag.access_pass.issued', options as never)
        onIssued() {}
      }
      return Named;
    }).toThrow(message);
  });

  it('one name on two methods that handle one event, naming the method and the name', async () => {
    @Injectable()
    class Twice {
      @OnServiceEvent('ag.access_pass.issued', { name: 'sync' })
      onIssued() {}

      @OnServiceEvent('ag.access_pass.*', { name: 'sync' })
      onAnyPass() {}
    }
    await expectBootstrapRefused(
      Twice,
      /^\[service-webhooks\] ServiceWebhooksModule: @OnServiceEvent on Twice\.onAnyPass: .*"sync"/,
    );
  });

  it('a decorated method on a request-scoped provider, which no delivery could run', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class PerRequest {
      @OnServiceEvent('ag.access_pass.issued')
      onIssued() {}
    }
    await expectBootstrapRefused(
      PerRequest,
      /@OnServiceEvent on PerRequest\.onIssued, a request-scoped or transient provider; .* make it a singleton/,
    );
  });

  it('a decorator on a static method, when the class is defined', () => {
    expect(() => {
      class Static {
        @OnServiceEvent('ag.access_pass.issued')
        static onIssued() {}
      }
      return Static;
    }).toThrow(/not an instance method/);
  });

  it('can be injected to drain deliveries', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ServiceWebhooksModule.forRoot({ bearerTokens: [TOKEN], logger: false })],
    }).compile();
    await moduleRef.init();
    await expect(moduleRef.get(ServiceWebhooks).drain({ timeoutMs: 100 })).resolves.toEqual({
      drained: true,
      requests: 0,
      running: [],
    });
    await moduleRef.close();
  });
});

describeWithRedis('ServiceWebhooksModule with a BullMQ inbox', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer({ persistent: true });
  }, 60_000);
  afterAll(async () => {
    await redis?.close();
  });

  /** Connections Redis holds open now, the test's own included. */
  async function connections(probe: Redis): Promise<number> {
    const list = (await probe.call('CLIENT', 'LIST')) as string;
    return list.trim().split('\n').length;
  }

  /**
   * Runs `body`, closes the app it returns, and checks that Redis holds the connections it had
   * before: app.close() resolved after every module's onApplicationShutdown.
   */
  async function closingEveryConnection(body: () => Promise<INestApplication>): Promise<void> {
    const probe = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    probe.on('error', () => undefined);
    try {
      const before = await connections(probe);
      const app = await body();
      await app.close();
      expect(await connections(probe)).toBe(before);
    } finally {
      probe.disconnect();
    }
  }

  /** A provider whose decorated method records the id of each ag.access_pass.issued in `ran`. */
  function issuedRecorder(ran: string[]) {
    @Injectable()
    class Queued {
      @OnServiceEvent('ag.access_pass.issued')
      onIssued(event: ServiceEvent<'ag.access_pass.issued'>) {
        ran.push(event.id);
      }
    }
    return Queued;
  }

  it.each(PLATFORMS)(
    'on %s: queues the event, runs the decorated method in the worker started with the app, and closes every connection on app.close()',
    (platform) =>
      closingEveryConnection(async () => {
        const ran: string[] = [];
        const inbox = bullmqInbox({ connection: redis.url, name: `nest-${platform}`, logger: false });
        const { app, url } = await startNestApp(platform, {
          imports: [ServiceWebhooksModule.forRoot({ bearerTokens: [TOKEN], logger: false, inbox })],
          providers: [issuedRecorder(ran)],
        });
        const answer = await overHttp(url + PATH, delivery(issued({}, `evt_queued_${platform}`)));
        expect(answer.status).toBe(200);
        expect(JSON.parse(answer.text)).toMatchObject({ status: 'queued' });
        await pollUntil('the worker ran the decorated method', () => ran.length > 0, { timeoutMs: 15_000 });
        expect(ran).toEqual([`evt_queued_${platform}`]);
        return app;
      }),
    60_000,
  );

  it.each(PLATFORMS)(
    'on %s: beside @nestjs/bullmq on the same Redis (its BullModule.forRoot, a queue and a processor), each queue runs only its own jobs, and app.close() closes both',
    (platform) =>
      closingEveryConnection(async () => {
        const ran: string[] = [];
        const orders: string[] = [];
        const completed: unknown[] = [];
        const ORDERS = `orders-${platform}`;
        @Processor(ORDERS)
        class OrdersProcessor extends WorkerHost {
          async process(job: Job<{ n: number }>) {
            orders.push(`${job.name} ${job.data.n}`);
            return job.data.n * 2;
          }

          @OnWorkerEvent('completed')
          onCompleted(job: Job) {
            completed.push(job.returnvalue);
          }
        }
        @Injectable()
        class Orders {
          constructor(@InjectQueue(ORDERS) readonly queue: Queue) {}
        }
        // One object of connection options, as an app's config gives both: neither may change it.
        const { hostname, port } = new URL(redis.url);
        const shared = { host: hostname, port: Number(port) };
        const inbox = bullmqInbox({ connection: shared, name: `nest-beside-${platform}`, logger: false });
        const { app, url } = await startNestApp(platform, {
          imports: [
            BullModule.forRoot({ connection: shared }),
            BullModule.registerQueue({ name: ORDERS }),
            ServiceWebhooksModule.forRoot({ bearerTokens: [TOKEN], logger: false, inbox }),
          ],
          providers: [issuedRecorder(ran), OrdersProcessor, Orders],
        });
        const answer = await overHttp(url + PATH, delivery(issued({}, `evt_beside_${platform}`)));
        expect([answer.status, JSON.parse(answer.text)]).toEqual([
          200,
          expect.objectContaining({ status: 'queued' }),
        ]);
        const { queue } = app.get(Orders);
        const job = await queue.add('order', { n: 21 });
        await pollUntil('both workers ran their job', () => ran.length > 0 && completed.length > 0, {
          timeoutMs: 15_000,
        });
        // Each worker took only its own queue's job: the app's processor never saw the event, nor
        // the inbox's worker the order, which completed with its processor's value.
        expect(ran).toEqual([`evt_beside_${platform}`]);
        expect(orders).toEqual(['order 21']);
        expect(completed).toEqual([42]);
        expect(job.queueName).toBe(ORDERS);
        expect(await queue.getJobCounts('completed', 'failed', 'waiting')).toEqual({
          completed: 1,
          failed: 0,
          waiting: 0,
        });
        expect(await inbox.status()).toMatchObject({ waiting: 0, active: 0, dead: 0 });
        // The shared options are as they were: the inbox's worker got maxRetriesPerRequest: null on
        // a copy, and Nest's queue and worker kept theirs.
        expect(shared).toEqual({ host: hostname, port: Number(port) });
        return app;
      }),
    60_000,
  );

  it("runs docs/frameworks.md's @nestjs/bullmq module as written: the event and the order each run in their own worker", async () => {
    const block = allBlocks().find((b) => b.file === 'src/queues.module.ts');
    if (block === undefined) throw new Error('docs/frameworks.md has no block src/queues.module.ts');
    const { hostname, port } = new URL(redis.url);
    Object.assign(process.env, { REDIS_HOST: hostname, REDIS_PORT: port, SERVICE_WEBHOOK_TOKEN: TOKEN });
    try {
      await closingEveryConnection(async () => {
        const exported = runBlocks([block]).get(block.file) as Record<
          string,
          new (...args: never[]) => unknown
        >;
        const { app, url } = await startNestApp('express', { imports: [exported.QueuesModule!] });
        const answer = await overHttp(url + PATH, delivery(issued({}, 'evt_docs_beside')));
        expect(JSON.parse(answer.text)).toMatchObject({ status: 'queued' });
        await (app.get(exported.Orders!) as { queue: Queue }).queue.add('ship', { orderId: 7 });
        const passes = app.get(exported.PassService!) as { issued: string[] };
        const orders = app.get(exported.OrdersProcessor!) as { shipped: number[] };
        await pollUntil('both workers ran', () => passes.issued.length > 0 && orders.shipped.length > 0, {
          timeoutMs: 15_000,
        });
        expect([passes.issued, orders.shipped]).toEqual([['evt_docs_beside'], [7]]);
        return app;
      });
    } finally {
      for (const name of ['REDIS_HOST', 'REDIS_PORT', 'SERVICE_WEBHOOK_TOKEN']) delete process.env[name];
    }
  }, 60_000);
});
