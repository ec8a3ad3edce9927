import express, { type Router } from 'express';
import { CONSOLE_CSS, CONSOLE_HTML } from './console-page';
import { CONSOLE_JS } from './console-script';

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy':
    "default-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
};

/** The web console at the emulator's root: one page, its stylesheet and its script. */
export function webConsole(): Router {
  const router = express.Router();
  const serve = (type: string, body: string) => (_req: express.Request, res: express.Response) =>
    void res.set({ ...SECURITY_HEADERS, 'Content-Type': `${type}; charset=utf-8` }).send(body);
  router.get('/', serve('text/html', CONSOLE_HTML));
  router.get('/_console/console.css', serve('text/css', CONSOLE_CSS));
  router.get('/_console/console.js', serve('text/javascript', CONSOLE_JS));
  return router;
}
