import type { AddressInfo } from 'node:net';
import http from 'node:http';
import type { Express } from 'express';

/** Starts `app` on 127.0.0.1, on a free port. */
export async function listen(
  app: Express | http.RequestListener,
): Promise<{ server: http.Server; url: string; port: number; close(): Promise<void> }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
