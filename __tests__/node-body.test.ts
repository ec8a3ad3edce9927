import { createEventRouter } from '../lib';
import { buildEvent } from '../lib/testing';
import { pollUntil } from './support/poll-until';
import { postHead, rawSocket, wireServer } from './support/wire-server';

const TOKEN = 'tok_node_body';

describe('reading a node:http body, byte by byte on the wire', () => {
  it('answers 408 with Connection: close to a body that stops arriving, within bodyTimeoutMs', async () => {
    const s = await wireServer(TOKEN, { bodyTimeoutMs: 150 });
    const client = rawSocket(s.port);
    try {
      client.write(postHead(TOKEN, '/', 1000));
      client.write('{"specversion":');
      await pollUntil('the 408 arrived', () => /\r\n\r\n.*body-timeout/s.test(client.received()), {
        describe: () => client.received().slice(0, 200),
      });
      expect(client.received()).toMatch(/^HTTP\/1.1 408/);
      expect(client.received()).toMatch(/connection: close/i);
      expect(client.received()).toContain('urn:service-webhooks:problem:body-timeout');
    } finally {
      client.close();
      s.close();
    }
  });

  // node's parser refuses a body that disagrees with its Content-Length, unless the server was made
  // with insecureHTTPParser (or --insecure-http-parser, for old proxies): then a chunked body beside a
  // Content-Length is let through, the shape of a smuggled request, and the receiver refuses it itself.
  it('answers 400 to a chunked body that disagrees with its Content-Length (insecureHTTPParser)', async () => {
    let runs = 0;
    const s = await wireServer(
      TOKEN,
      { router: createEventRouter().onAny(() => void runs++) },
      { insecureHTTPParser: true },
    );
    const body = JSON.stringify(buildEvent('ag.hid_org.created'));
    const client = rawSocket(s.port);
    try {
      const chunked = `${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      client.write(
        postHead(TOKEN, '/', Buffer.byteLength(body) + 10, 'Transfer-Encoding: chunked\r\n') + chunked,
      );
      await pollUntil('the receiver answered the mismatched body', () => client.received().includes('}'), {
        describe: () => JSON.stringify(client.received()),
      });
      expect(client.received()).toMatch(/^HTTP\/1.1 400/);
      expect(client.received()).toMatch(/connection: close/i);
      expect(client.received()).toContain('urn:service-webhooks:problem:body-length-mismatch');
      expect(runs).toBe(0);
    } finally {
      client.close();
      s.close();
    }
  });
});
