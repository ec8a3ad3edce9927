import express from 'express';
import { createEventRouter, webhookReceiver, type IdempotencyStore } from '../../lib';
import { deliverEvent } from '../../lib/testing';

/**
 * A receiver app over `store` whose one handler records the events it ran, for the tests that take
 * a store's server away and bring it back.
 */
export function receiverOn(store: IdempotencyStore, settings: { timeoutMs?: number } = {}) {
  const handled: string[] = [];
  const router = createEventRouter().on('ag.hid_org.created', async (event) => void handled.push(event.id));
  const app = express();
  app.use(
    '/hooks',
    webhookReceiver({ bearerTokens: ['tok'], router, idempotency: { store, ...settings }, logger: false }),
  );
  const send = (id: string) =>
    deliverEvent(app, 'ag.hid_org.created', {}, { token: 'tok', path: '/hooks', id });
  return {
    handled,
    send,
    /** Delivers `id` as the Service would, every 100 ms until a 200, `tries` times at most; the last answer. */
    async sendUntilAcknowledged(id: string, tries: number) {
      let answer = await send(id);
      for (let i = 1; i < tries && answer.status !== 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        answer = await send(id);
      }
      return answer;
    },
    /** Delivers `id` once and says how long the answer took. */
    async timed(id: string) {
      const started = Date.now();
      const answer = await send(id);
      return { answer, ms: Date.now() - started };
    },
  };
}
