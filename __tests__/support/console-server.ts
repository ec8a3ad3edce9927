import http from 'node:http';
import { ConsoleClient } from '../../lib/console';
import { listen } from './listen';

export const CONSOLE_SECRET = 'sk_hardening_secret_51f0';

/** A console API stand-in on loopback that counts what it receives and answers with `answer`. */
export async function consoleServer(
  answer: (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void,
) {
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders }[] = [];
  const running = await listen((req: http.IncomingMessage, res: http.ServerResponse) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => answer(req, res, seen.length));
  });
  return { ...running, seen };
}

/** A client of `baseUrl` with a fixed account and secret. */
export const consoleClientFor = (baseUrl: string, timeoutMs = 5000) =>
  new ConsoleClient({ baseUrl, accountId: 'acct_1', secretKey: CONSOLE_SECRET, timeoutMs });

/** Answers `body` as JSON with `status`. */
export const answerJson = (res: http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
};

let counter = 0;
/** A full page (100) of unverified webhooks, each id new. */
export const fullPage = () =>
  Array.from({ length: 100 }, () => ({ id: `wh_${++counter}`, name: 'n', verified: false }));

/** A page of one webhook whose id is new. */
export const newWebhookPage = () => [{ id: `wh_${++counter}`, name: 'n' }];
