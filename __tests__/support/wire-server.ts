import http from 'node:http';
import net from 'node:net';
import { createEventRouter, createNodeHandler, type ReceiverOptions } from '../../lib';

/**
 * A `node:http` server over `createNodeHandler` on loopback, for tests that write raw bytes on the
 * wire (trickling bodies, smuggling shapes); `close` stops it and its connections.
 */
export async function wireServer(
  token: string,
  options: Partial<ReceiverOptions> = {},
  serverOptions: http.ServerOptions = {},
) {
  const handler = createNodeHandler({
    bearerTokens: [token],
    router: createEventRouter(),
    logger: false,
    ...options,
  });
  const srv = http.createServer(serverOptions, (req, res) => void handler(req, res));
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  return { handler, port, close: () => (srv.closeAllConnections(), srv.close()) };
}

/** Sends raw bytes to a server over TCP; `received` is what came back so far, as latin1. */
export function rawSocket(port: number) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => (received += chunk.toString('latin1')));
  socket.on('error', () => undefined);
  return {
    write: (text: string) => socket.write(text),
    received: () => received,
    close: () => socket.destroy(),
  };
}

/** The head of a delivery's POST, `extra` being further header lines (each ending in CRLF). */
export function postHead(token: string, path: string, length: number, extra = ''): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/cloudevents+json\r\nAuthorization: Bearer ${token}\r\nContent-Length: ${length}\r\n${extra}\r\n`;
}
