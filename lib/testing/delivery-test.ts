import type { RequestListener } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Server } from 'node:net';

/*
 * supertest's types, structurally: the published .d.ts must compile without supertest or
 * @types/supertest (issue 19, item 3), as the Express door's does without @types/express. supertest's
 * own `Test` and `Response` fit these shapes (`__tests__/testing.types.ts` proves it), so what the test
 * kit returns is supertest's, typed by what a test uses of it.
 */

/** Anything supertest accepts: an Express app (or any node request listener), an `http.Server` or a base URL. */
export type Target =
  | Server
  | RequestListener
  | ((request: Http2ServerRequest, response: Http2ServerResponse) => void | Promise<void>)
  | string;

/** The receiver's answer, as supertest's `Response` carries it. */
export interface DeliveryResponse {
  /** The HTTP status. */
  status: number;
  /** The parsed JSON body (`any`, as supertest types it, so a test reads `res.body.status`). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- supertest's own type; `unknown` would break every `res.body.x`
  body: any;
  /** The raw body text. */
  text: string;
  /** The response headers, names in lower case. */
  headers: Record<string, string>;
  /** The content type without its parameters. */
  type: string;
  /** Whether the status is 2xx. */
  ok: boolean;
  /** One response header, by case-insensitive name. */
  get(header: string): string | undefined;
}

/** supertest's callback to `.end()` and `.expect()`. */
export type DeliveryCallback = (error: Error | null, response: DeliveryResponse) => void;

/**
 * What `sendEvent`, `deliverEvent` and `sendHandshake` return: supertest's `Test`, typed by what a test
 * uses of it. Chain `.expect()` as with supertest and `await` it for the {@link DeliveryResponse}.
 */
export interface DeliveryTest extends Promise<DeliveryResponse> {
  /** Expects this status. */
  expect(status: number, callback?: DeliveryCallback): this;
  /** Expects this status and this body (deep-equal object, exact text or a RegExp). */
  expect(status: number, body: unknown, callback?: DeliveryCallback): this;
  /** Runs `checker` on the response; a throw fails the test. */
  expect(checker: (response: DeliveryResponse) => unknown, callback?: DeliveryCallback): this;
  /** Expects this body: deep-equal object, exact text or a RegExp. */
  expect(body: string | RegExp | object, callback?: DeliveryCallback): this;
  /** Expects this header value (exact or a RegExp). */
  expect(field: string, value: string | RegExp, callback?: DeliveryCallback): this;
  /** Sets a request header; call it before `await` or `.end()`, which send the request. */
  set(field: string, value: string): this;
  /** Sets several request headers at once. */
  set(fields: Record<string, string>): this;
  /** Sends the request and calls `callback` with the outcome of every `.expect`. */
  end(callback?: DeliveryCallback): this;
}
