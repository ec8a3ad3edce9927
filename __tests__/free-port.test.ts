import net from 'node:net';
import { FIRST_PORT, freePort, kernelPortsFrom } from './support/server-binary';

describe('freePort (the test servers’ ports)', () => {
  it('gives ports a server can listen on, outside the range the kernel gives outgoing connections', async () => {
    const low = kernelPortsFrom();
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) {
      // A server restarted on its port (chaos, a killed receiver) must never find an outgoing
      // connection holding it: the kernel picks those from its range, so these come from below it.
      // (When the range starts at FIRST_PORT or lower, there is no room below it: any free port.)
      if (low > FIRST_PORT) expect(port).toBeLessThan(low);
      expect(port).toBeGreaterThan(1024);
      const server = net.createServer();
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, '127.0.0.1', resolve);
      });
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
