export { RedisStore, type RedisStoreOptions, type SendCommand } from './redis-store';
