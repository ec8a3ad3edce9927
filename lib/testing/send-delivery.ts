import { checkOptionKeys } from '../check-option-keys';
import type { EventType } from '../events/catalogue';
import type { Layout } from '../events/webhook-event';
import {
  BUILD_OPTION_KEYS,
  buildCatalogueEvent,
  checkBuildOptions,
  type BuildEventOptions,
  type DeliveryEnvelope,
} from '../events/build-event';
import type { DataOverrides } from '../events/event-overrides';
import { DELIVERY_HEADERS } from '../events/delivery-headers';
import type { DeliveryTest, Target } from './delivery-test';

/** What the test kit calls of supertest, so no supertest type reaches the published .d.ts. */
type Supertest = (target: Target) => {
  post(path: string): DeliveryTest & { send(body: string): DeliveryTest };
};
let supertest: Supertest | undefined;

/** Loaded on first use: supertest is an optional peer, and `buildEvent` must work without it. */
function request(target: Target): ReturnType<Supertest> {
  if (supertest === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a lazy load of an optional peer
      supertest = require('supertest') as Supertest;
    } catch {
      throw new Error(
        '[service-webhooks] sendEvent, deliverEvent and sendHandshake need supertest: npm install --save-dev supertest',
      );
    }
  }
  return supertest(target);
}

/** Options of {@link sendEvent} and {@link deliverEvent}: how the delivery is sent. */
export interface SendOptions {
  /** The bearer token sent as `Authorization: Bearer <token>`; omit it to send none. */
  token?: string | undefined;
  /** Path the receiver is mounted at. Defaults to `'/'`. */
  path?: string | undefined;
}

const SEND_OPTION_KEYS: readonly string[] = ['token', 'path'];
const HANDSHAKE_OPTION_KEYS: readonly string[] = [...SEND_OPTION_KEYS, 'challenge'];

/** POSTs a delivery to `target` as the Service would; returns supertest's `Test` ({@link DeliveryTest}) to chain `.expect()`. */
export function sendEvent(
  target: Target,
  event: DeliveryEnvelope | Record<string, unknown>,
  options: SendOptions = {},
): DeliveryTest {
  checkOptionKeys(options, SEND_OPTION_KEYS, 'sendEvent');
  const test = request(target)
    .post(options.path ?? '/')
    .set(DELIVERY_HEADERS);
  if (options.token !== undefined) test.set('Authorization', `Bearer ${options.token}`);
  return test.send(JSON.stringify(event));
}

/** Builds an event of `type` (see `buildEvent`, typed the same way) and sends it. */
export function deliverEvent<T extends EventType, L extends Layout = 'A'>(
  target: Target,
  type: T,
  data?: DataOverrides<L, NoInfer<T>>,
  options: SendOptions & BuildEventOptions<L> = {},
): DeliveryTest {
  // Checked as one set, so a key either function knows is not refused by the other.
  checkBuildOptions(options, [...BUILD_OPTION_KEYS, ...SEND_OPTION_KEYS], 'deliverEvent');
  const { token, path, ...build } = options;
  const send: SendOptions = {
    ...(token === undefined ? {} : { token }),
    ...(path === undefined ? {} : { path }),
  };
  return sendEvent(target, buildCatalogueEvent(type, data ?? {}, build, 'deliverEvent', true), send);
}

/** Options of {@link sendHandshake}. */
export interface HandshakeOptions extends SendOptions {
  /** The challenge. Defaults to a random token. */
  challenge?: string | undefined;
}

/** Sends the verification handshake of spec 5.3; a passing receiver echoes `challenge`. */
export function sendHandshake(target: Target, options: HandshakeOptions = {}): DeliveryTest {
  checkOptionKeys(options, HANDSHAKE_OPTION_KEYS, 'sendHandshake');
  const challenge =
    options.challenge ?? `chl_${Math.random().toString(36).slice(2)}${Date.now().toString(36)}`;
  const test = request(target)
    .post(options.path ?? '/')
    .set('Content-Type', 'application/json')
    .set('User-Agent', DELIVERY_HEADERS['User-Agent'])
    .set('X-Service-Webhook-Challenge', challenge);
  if (options.token !== undefined) test.set('Authorization', `Bearer ${options.token}`);
  return test.send(JSON.stringify({ challenge }));
}
