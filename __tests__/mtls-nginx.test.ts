import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { createEventRouter, createNodeHandler } from 'service-webhooks';
import { createEmulator } from 'service-webhooks/emulator';
import { createClientCertificateVerifier } from '../lib/mtls';
import { acceptedReply, fingerprintOf, mtlsFixtures, type MtlsFixtures } from './support/mtls-fixtures';
import { describeWithNginx, mtlsServerBlock, startNginx, type NginxServer } from './support/nginx-server';
import { request } from './support/mtls-server';

describeWithNginx('mTLS terminated by a real nginx', () => {
  let f: MtlsFixtures;
  let upstream: http.Server;
  let nginx: NginxServer;
  const seen: string[] = [];
  const handled: string[] = [];

  beforeAll(async () => {
    f = await mtlsFixtures();
    const verifier = createClientCertificateVerifier(
      { from: 'nginx', fingerprints: [fingerprintOf(f.certs.client.cert)] },
      'test',
    );
    const router = createEventRouter().on('ag.access_pass.issued', (event) => void handled.push(event.id));
    // The real receiver at /hooks, reading what nginx forwards; every other path answers the bare check.
    const receiver = createNodeHandler({
      router,
      logger: false,
      path: '/hooks',
      mtls: { from: 'nginx', fingerprints: [fingerprintOf(f.certs.client.cert)] },
    });
    upstream = http.createServer((req, res) => {
      seen.push(String(req.headers['x-ssl-client-verify']));
      if (req.url === '/hooks') return void receiver(req, res);
      const check = verifier.check({
        header: (name) => req.headers[name] as string | undefined,
        socket: req.socket,
      });
      res.writeHead(check.ok ? 200 : check.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(check));
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    nginx = await startNginx(
      { ca: f.certs.ca.cert, cert: f.certs.server.cert, key: f.certs.server.key },
      (upstream.address() as AddressInfo).port,
    );
  });

  afterAll(async () => {
    await nginx?.close();
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
  });

  const via = (options: { cert?: string; key?: string; headers?: Record<string, string> }) =>
    request(`${nginx.url}/check`, { ca: f.certs.ca.cert, ...options });

  it('passes the pinned client certificate through to the receiver', async () => {
    const reply = await via(f.certs.client);
    expect(reply).toEqual(acceptedReply(f.certs.client.cert));
  });

  it('refuses at the receiver a certificate of the CA that is not pinned', async () => {
    const reply = await via(f.next);
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject({
      slug: 'client-certificate-not-pinned',
      fingerprint: fingerprintOf(f.next.cert),
    });
  });

  it.each([
    ['no certificate', () => ({})],
    ['a certificate of another CA', () => f.stranger],
    ['an expired certificate', () => f.expired],
  ])('is refused by nginx with %s, before the receiver sees anything', async (_name, client) => {
    const before = seen.length;
    const reply = await via(client());
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({
      text: expect.stringMatching(/400 (No required SSL certificate was sent|The SSL certificate error)/),
    });
    expect(seen.length).toBe(before);
  });

  it("carries the emulator's deliveries to an mtls webhook end to end: emulator → nginx → receiver", async () => {
    const emulator = await createEmulator({
      logger: false,
      mtls: { ca: f.certs.ca.cert, cert: f.certs.client.cert, key: f.certs.client.key },
    });
    try {
      const url = `${nginx.url}/hooks`;
      const webhook = await emulator.registerWebhook({
        name: 'behind nginx',
        url,
        authMethod: 'mtls',
        subscribedEvents: ['ag.access_pass.issued'],
      });
      expect(webhook.verified).toBe(true);
      const { event } = emulator.emit('ag.access_pass.issued');
      const [delivery] = await emulator.waitForDeliveries({ eventId: event.id }, { timeoutMs: 5000 });
      expect(delivery?.state).toBe('acknowledged');
      expect(handled).toEqual([event.id]);
      // A bearer-token webhook gets no client certificate, so nginx refuses it before the receiver.
      const bearer = await emulator.registerWebhook({
        name: 'no cert',
        url,
        subscribedEvents: ['ag.access_pass.issued'],
      });
      expect(bearer).toMatchObject({ verified: false, lastHandshake: { status: 400 } });
    } finally {
      await emulator.close();
    }
  });

  it("overwrites a client's forged certificate headers with its own", async () => {
    const forged = {
      'x-ssl-client-cert': encodeURIComponent(f.stranger.cert),
      'x-ssl-client-verify': 'SUCCESS',
    };
    const reply = await via({ ...f.certs.client, headers: forged });
    expect(reply.body).toMatchObject({ ok: true, fingerprint: fingerprintOf(f.certs.client.cert) });
  });
});

describe("the mTLS guide's nginx configuration (docs/mtls.md)", () => {
  it('is the server block this suite runs, with other paths', () => {
    const guide = readFileSync(path.join(__dirname, '..', 'docs', 'mtls.md'), 'utf8');
    const block = /\n## Behind nginx\n[\s\S]*?```nginx\n([\s\S]*?)```/.exec(guide)?.[1] ?? '';
    const directives = (text: string) =>
      text
        .split('\n')
        .map((line) => line.trim().replace(/\s+/g, ' '))
        .filter((line) => /^(ssl_|proxy_set_header|#)/.test(line))
        .map((line) => line.replace(/ \/\S+;$/, ' <path>;'));
    expect(directives(block).length).toBeGreaterThan(8);
    expect(directives(block)).toEqual(
      directives(mtlsServerBlock({ port: 1, upstreamPort: 2, dir: '/tmp/x' })),
    );
  });
});
