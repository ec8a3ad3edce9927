export { PostgresStore, type PostgresQueryable, type PostgresStoreOptions } from './postgres-store';
export { postgresSetupSql } from './postgres-sql';
