let found = false;

/**
 * BullMQ 6 makes its Redis connections from a URL or options with `ioredis`, which it does not
 * install (an optional peer): without it the worker would fail only at `startWorker`, and the CLI
 * at its first command. Checked when the inbox is made, with what to install.
 */
export function checkIoredis(): void {
  if (found) return;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, checked when needed
    require('ioredis');
    found = true;
  } catch (error) {
    throw new Error(
      "[service-webhooks] bullmqInbox: a redis:// URL or connection options need 'ioredis', which BullMQ makes its connections with but does not install: npm install ioredis",
      { cause: error },
    );
  }
}
