import { ApiProblem, sendApiProblem } from './api-problem';
import type { Emulator } from './emulator';
import type { RouteHandler } from './emulator-router';

/** Browser tabs and `listen` processes following one emulator; more are refused, not queued. */
const MAX_STREAMS = 32;
const HEARTBEAT_MS = 15_000;
/**
 * Unsent bytes one stream may hold. A reader that stops reading would otherwise keep every change in
 * memory (100 kB events add up fast); past this it is dropped, and a reader that reconnects gets
 * `/state` afresh.
 */
export const MAX_STREAM_BUFFER = 1024 * 1024;

/** Every change of the emulator as server-sent events, one `event:` per change kind. */
export function sseStream(emulator: Emulator): RouteHandler {
  let open = 0;
  return function sseStream(req, res) {
    if (open >= MAX_STREAMS) {
      sendApiProblem(
        res,
        new ApiProblem({
          status: 503,
          slug: 'emulator-busy',
          title: 'Service Unavailable',
          detail: `The emulator is busy: it serves at most ${MAX_STREAMS} streams at once (web console tabs and listen processes). Close some and try again.`,
          headers: { 'Retry-After': '5' },
        }),
      );
      return;
    }
    open++;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      open--;
      stop();
      clearInterval(heartbeat);
    };
    const send = (text: string) => {
      if (closed) return;
      if (res.writableLength > MAX_STREAM_BUFFER) {
        close();
        res.destroy();
        return;
      }
      res.write(text);
    };
    const stop = emulator.subscribe((change) =>
      send(`event: ${change.kind}\ndata: ${JSON.stringify(change)}\n\n`),
    );
    const heartbeat = setInterval(() => send(': keep-alive\n\n'), HEARTBEAT_MS);
    send(`event: hello\ndata: ${JSON.stringify({ url: emulator.url })}\n\n`);
    req.raw.on('close', close);
  };
}
