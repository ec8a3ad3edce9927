import type { Inbox } from '../inbox/inbox';
import { CliFailure, UsageError } from './cli-errors';

/**
 * The inbox a `--url` names: `redis://` / `rediss://` on BullMQ, `postgres://` / `postgresql://` on
 * pg-boss. The engine's module is loaded only here, so the CLI runs without either installed.
 * `read` opens it only to read (status, dead letters): nothing on the server changes, and a queue
 * that is not there is an error naming the closest one.
 */
export function openInbox(
  url: string | undefined,
  name: string | undefined,
  access: 'read' | 'write' = 'write',
): Inbox {
  if (url === undefined || url === '')
    throw new UsageError(
      'give the queue as --url redis://… or --url postgres://… (or set SERVICE_WEBHOOKS_INBOX_URL)',
    );
  const scheme = /^([a-z]+):\/\//i.exec(url)?.[1]?.toLowerCase();
  const named = name === undefined ? {} : { name };
  try {
    if (scheme === 'redis' || scheme === 'rediss') {
      if (access === 'read') {
        type Reader = typeof import('./read-only-bullmq-inbox');
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for this scheme
        const { readOnlyBullmqInbox } = require('./read-only-bullmq-inbox') as Reader;
        return readOnlyBullmqInbox(url, name);
      }
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for this scheme
      const { bullmqInbox } = require('../bullmq/index') as typeof import('../bullmq/index');
      return bullmqInbox({ connection: url, logger: false, ...named });
    }
    if (scheme === 'postgres' || scheme === 'postgresql') {
      if (access === 'read') {
        type Reader = typeof import('../pg-boss/read-only-pg-boss-inbox');
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for this scheme
        const { readOnlyPgBossInbox } = require('../pg-boss/read-only-pg-boss-inbox') as Reader;
        return readOnlyPgBossInbox({ connectionString: url, ...named });
      }
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for this scheme
      const { pgBossInbox } = require('../pg-boss/index') as typeof import('../pg-boss/index');
      return pgBossInbox({ connectionString: url, ...named });
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND')
      throw new CliFailure(
        `this queue needs ${scheme?.startsWith('redis') ? 'bullmq' : 'pg-boss'}: npm install ${scheme?.startsWith('redis') ? 'bullmq ioredis' : 'pg-boss'}`,
      );
    throw error;
  }
  throw new UsageError(
    `--url must start redis://, rediss://, postgres:// or postgresql:// (got ${scheme ?? 'no scheme'})`,
  );
}
