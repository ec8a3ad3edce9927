import { checkReadSchema, READ_SCHEMA_VERSIONS } from '../lib/pg-boss/pg-boss-reads';
import type { PgBoss } from '../lib/pg-boss/load-pg-boss';

const bossAt = (version: number | null) => ({ schemaVersion: async () => version }) as unknown as PgBoss;

describe('checkReadSchema', () => {
  it.each(READ_SCHEMA_VERSIONS)(
    'takes the schema version its reads were written for (%p)',
    async (version) => {
      await expect(checkReadSchema(bossAt(version), 'pgboss', 'pgBossInbox')).resolves.toBeUndefined();
    },
  );

  it.each([
    [45, /schema "pgboss" is at version 45, and this service-webhooks reads version 46/],
    [47, /at version 47, .*install the pg-boss version service-webhooks names/],
    [null, /at version none/],
  ])('refuses version %p, saying what to do', async (version, message) => {
    await expect(checkReadSchema(bossAt(version), 'pgboss', 'pgBossInbox')).rejects.toThrow(
      /^\[service-webhooks\] pgBossInbox: /,
    );
    await expect(checkReadSchema(bossAt(version), 'pgboss', 'pgBossInbox')).rejects.toThrow(message);
  });
});
