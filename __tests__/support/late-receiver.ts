import express from 'express';
import { challengeHandshake, webhookReceiver, type EventRouter } from '../../lib';
import { listen } from './listen';

/**
 * A customer app whose token exists only once its webhook is registered, while registering sends
 * the handshake: handshakes are answered at once, the receiver is built when `useToken` is called.
 */
export async function lateReceiverApp(router: EventRouter) {
  const mounted: { receiver?: express.RequestHandler } = {};
  const app = express();
  app.use('/hooks', challengeHandshake(), (req, res, next) =>
    mounted.receiver ? mounted.receiver(req, res, next) : res.sendStatus(503),
  );
  const server = await listen(app);
  return {
    url: `${server.url}/hooks`,
    close: server.close,
    useToken(token: string): void {
      mounted.receiver = webhookReceiver({ bearerTokens: [token], router, logger: false });
    },
  };
}
