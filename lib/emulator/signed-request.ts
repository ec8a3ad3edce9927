import { randomBytes } from 'node:crypto';
import { verifyPayloadSignature } from '../console/sign-payload';
import { ApiProblem } from './api-problem';
import type { ConsoleAccount } from './console-backend';
import type { EmulatorRequest } from './emulator-router';

const unauthorized = (detail: string) =>
  new ApiProblem({ status: 401, slug: 'unsigned-request', title: 'Unauthorized', detail });

/** The payload text that was signed: the raw body for POST, `sig_payload` for GET and DELETE. */
function signedText(req: EmulatorRequest, body: string): string | undefined {
  if (req.method === 'POST') return body;
  return req.query.get('sig_payload') ?? undefined;
}

/** Checked against when the account is unknown, so both refusals take the same time. */
const NO_ACCOUNT_SECRET = randomBytes(32).toString('hex');
const REFUSED =
  'X-ACCT-ID and X-PAYLOAD-SIG do not match an account and its signature of the payload (spec 5.1).';

/**
 * Spec 5.1, checked over the exact bytes received, before anything else; answers the account it
 * proves. An unknown account and a wrong signature get the same answer, after the same work: the 401
 * must not tell which accounts exist.
 */
export function signedRequest(
  accounts: ReadonlyMap<string, ConsoleAccount>,
): (req: EmulatorRequest, body: string) => string {
  return function signedRequest(req, body) {
    const text = signedText(req, body);
    if (text === undefined)
      throw unauthorized('GET and DELETE must carry the signed payload as sig_payload.');
    const accountId = req.header('X-ACCT-ID');
    const account = accountId === undefined ? undefined : accounts.get(accountId);
    const signed = verifyPayloadSignature(
      text,
      account?.secretKey ?? NO_ACCOUNT_SECRET,
      req.header('X-PAYLOAD-SIG'),
    );
    if (account === undefined || !signed) throw unauthorized(REFUSED);
    return account.accountId;
  };
}
