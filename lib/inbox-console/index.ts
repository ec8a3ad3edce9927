export { inboxConsole, type InboxConsoleHandler } from './inbox-console';
export {
  inboxConsoleFetch,
  type InboxConsoleFetchHandler,
  type ConsoleConnection,
} from './inbox-console-fetch';
export type { InboxConsoleOptions, ConsoleAuthorize, ConsoleAccess } from './inbox-console-options';
