import type { Emulator } from '../emulator';
import { emulatorState } from '../emulator-state';
import { EmulatorRouter, sendText } from '../emulator-router';
import { firstPaint } from './first-paint';
import { EMULATOR_CONSOLE_CSS } from './console-page';
import { EMULATOR_CONSOLE_JS } from './console-script';

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy':
    "default-src 'self'; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
};

const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="6" fill="#2563eb"/></svg>';

/** The web console at the emulator's root: one page (its state rendered in), its stylesheet and script. */
export function webConsole(emulator: Emulator): EmulatorRouter {
  const serve = (type: string, body: string) => (_req: unknown, res: Parameters<typeof sendText>[0]) =>
    sendText(res, 200, type, body, SECURITY_HEADERS);
  return (
    new EmulatorRouter()
      .get('/', (_req, res) =>
        sendText(res, 200, 'text/html', firstPaint(emulatorState(emulator)), SECURITY_HEADERS),
      )
      // Browsers ask for it on their own; an icon of nothing, not a 404 in the console's network log.
      .get('/favicon.ico', (_req, res) => sendText(res, 200, 'image/svg+xml', FAVICON, SECURITY_HEADERS))
      .get('/_console/console.css', serve('text/css', EMULATOR_CONSOLE_CSS))
      .get('/_console/console.js', serve('text/javascript', EMULATOR_CONSOLE_JS))
  );
}
