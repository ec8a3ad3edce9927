import { EmulatorRouter, sendText } from '../emulator-router';
import { CONSOLE_CSS, CONSOLE_HTML } from './console-page';
import { CONSOLE_JS } from './console-script';

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy':
    "default-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
};

/** The web console at the emulator's root: one page, its stylesheet and its script. */
export function webConsole(): EmulatorRouter {
  const serve = (type: string, body: string) => (_req: unknown, res: Parameters<typeof sendText>[0]) =>
    sendText(res, 200, type, body, SECURITY_HEADERS);
  return new EmulatorRouter()
    .get('/', serve('text/html', CONSOLE_HTML))
    .get('/_console/console.css', serve('text/css', CONSOLE_CSS))
    .get('/_console/console.js', serve('text/javascript', CONSOLE_JS));
}
