import type { Inbox } from '../inbox/inbox';
import type { Logger } from '../logger';

/**
 * What {@link InboxConsoleOptions.authorize} answers for one request:
 * - `true`: allowed, as `"anonymous"` in the log;
 * - a non-empty string: allowed, and who it is (named in the page and in the log of every action);
 * - `false` (or `null`/`undefined`): refused with 403;
 * - `{ status: 401, challenge? }`: refused with 401, `challenge` sent as `WWW-Authenticate` (basic auth).
 */
export type ConsoleAccess =
  | boolean
  | string
  | null
  | undefined
  | {
      /** Refused as not signed in. */
      status: 401;
      /** Sent as `WWW-Authenticate` (`'Basic realm="ops"'`); none by default. */
      challenge?: string;
    };

/**
 * Decides whether a request may see the console or act on it: asked on every request (page, data,
 * stream, script, action) before anything else is read. `'loopback-only'` allows only requests from
 * 127.0.0.1 or ::1 (a local try-out; the page says so).
 */
export type ConsoleAuthorize<Request> =
  ((request: Request) => ConsoleAccess | Promise<ConsoleAccess>) | 'loopback-only';

/** The options of `inboxConsole()` (node:http and Express) and `inboxConsoleFetch()` (Fetch). */
export interface InboxConsoleOptions<Request> {
  /** The inbox to show and act on: `bullmqInbox()` or `pgBossInbox()`. Required. */
  inbox: Inbox;
  /**
   * Who may use the console. Required: there is no open default. Given the request as the door
   * received it (node's `IncomingMessage`, or the Fetch `Request`).
   */
  authorize: ConsoleAuthorize<Request>;
  /**
   * The path the console is mounted at, for its links and to find its own routes in `req.url`
   * (node:http) or the request's URL (Fetch): `'/ops/webhooks'`. Under Express `app.use(path, …)`
   * the mount path is read from `req.baseUrl` and this is not needed. Defaults to `''` (the root).
   */
  basePath?: string;
  /**
   * Where actions (with who did them) and failures to read the inbox are logged. Defaults to the
   * console (`console.info` for actions).
   */
  logger?: Logger | false;
}
