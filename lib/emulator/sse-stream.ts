import type { RequestHandler } from 'express';
import type { Emulator } from './emulator';

/** Browser tabs and `listen` processes following one emulator; more are refused, not queued. */
const MAX_STREAMS = 32;
const HEARTBEAT_MS = 15_000;

/** Every change of the emulator as server-sent events, one `event:` per change kind. */
export function sseStream(emulator: Emulator): RequestHandler {
  let open = 0;
  return function sseStream(req, res) {
    if (open >= MAX_STREAMS) {
      res
        .status(503)
        .set('Retry-After', '5')
        .json({ detail: `At most ${MAX_STREAMS} streams at once.` });
      return;
    }
    open++;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    res.write(`event: hello\ndata: ${JSON.stringify({ url: emulator.url })}\n\n`);
    const stop = emulator.subscribe((change) => {
      res.write(`event: ${change.kind}\ndata: ${JSON.stringify(change)}\n\n`);
    });
    const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), HEARTBEAT_MS);
    req.on('close', () => {
      open--;
      stop();
      clearInterval(heartbeat);
    });
  };
}
