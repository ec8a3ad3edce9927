export { pgBossInbox, type PgBossInboxOptions } from './pg-boss-inbox';
