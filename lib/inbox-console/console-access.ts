import type { ResolvedLogger } from '../logger';
import { consoleProblem } from './console-problem';
import type { ConsoleAnswer } from './console-request';
import type { ConsoleAccess, ConsoleAuthorize } from './inbox-console-options';

/** Who a request was allowed as, or the refusal to answer it with. */
export type AccessResult = { identity: string } | { refused: ConsoleAnswer };

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** The identity an allowed answer names, or undefined when `access` refuses. */
function identityOf(access: ConsoleAccess): string | undefined {
  if (access === true) return 'anonymous';
  if (typeof access === 'string' && access !== '') return access;
  return undefined;
}

/**
 * Asks `authorize` about one request. A refusal never says why (that is the app's to log); a throw
 * is logged without the request and answered 500, so a broken check never lets a request through.
 */
export async function checkAccess<Raw>(
  authorize: ConsoleAuthorize<Raw>,
  raw: Raw,
  remoteAddress: string | undefined,
  logger: ResolvedLogger,
): Promise<AccessResult> {
  if (authorize === 'loopback-only') {
    if (remoteAddress !== undefined && LOOPBACK.has(remoteAddress)) return { identity: 'loopback' };
    return {
      refused: consoleProblem(
        403,
        'console-forbidden',
        'Forbidden',
        "The inbox console is set to authorize: 'loopback-only' and this request did not come from 127.0.0.1 or ::1 (a Fetch door must pass its peer's address). Open it from this machine, or give the console an authorize function.",
      ),
    };
  }
  let access: ConsoleAccess;
  try {
    access = await authorize(raw);
  } catch (error) {
    logger.error(
      { error: error instanceof Error ? error.name : typeof error },
      'inbox console: authorize threw; the request was refused',
    );
    return {
      refused: consoleProblem(
        500,
        'console-authorize-failed',
        'Internal Server Error',
        "The inbox console's authorize function threw, so the request was refused. See the app's log.",
      ),
    };
  }
  if (typeof access === 'object' && access !== null && access.status === 401) {
    return {
      refused: consoleProblem(
        401,
        'console-unauthenticated',
        'Unauthorized',
        'Sign in to use the inbox console.',
        access.challenge === undefined ? {} : { 'WWW-Authenticate': access.challenge },
      ),
    };
  }
  const identity = identityOf(access);
  if (identity !== undefined) return { identity };
  return {
    refused: consoleProblem(
      403,
      'console-forbidden',
      'Forbidden',
      'This request is not allowed to use the inbox console: its authorize function said no.',
    ),
  };
}
