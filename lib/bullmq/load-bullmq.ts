import type * as Bullmq from 'bullmq';

let loaded: typeof Bullmq | undefined;

/**
 * `bullmq`, on first use, with what to do when it is absent: the CLI shares code with this subpath
 * and must run without the optional peer installed.
 */
export function loadBullmq(): typeof Bullmq {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- an optional peer, loaded when used
    loaded ??= require('bullmq') as typeof Bullmq;
  } catch (error) {
    throw new Error(
      "[service-webhooks] bullmqInbox: could not load 'bullmq'; install it beside service-webhooks, with the Redis client it connects with (npm install bullmq@6 ioredis)",
      { cause: error },
    );
  }
  return loaded;
}
