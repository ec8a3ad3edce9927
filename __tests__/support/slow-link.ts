import { createServer, connect, type Socket } from 'node:net';

/** A TCP proxy on 127.0.0.1 to a local server, every chunk held `delayMs` each way: a slow network. */
export interface SlowLink {
  /** `url` with its port turned to the proxy's. */
  url: string;
  close(): Promise<void>;
}

/**
 * Proxies to the server of `url` (host 127.0.0.1), delaying each chunk by `delayMs` in both
 * directions, in order: a client behind it sees every round trip take `2 × delayMs` longer.
 */
export async function startSlowLink(url: string, delayMs: number): Promise<SlowLink> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const forward = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => void setTimeout(() => to.writable && to.write(chunk), delayMs));
    from.on('end', () => void setTimeout(() => to.end(), delayMs));
    from.on('error', () => to.destroy());
    from.on('close', () => void setTimeout(() => to.destroy(), delayMs));
  };
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    }
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the slow link has no port');
  const proxied = new URL(url);
  proxied.port = String(address.port);
  return {
    url: proxied.toString(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
