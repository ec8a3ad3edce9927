import { randomBytes } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { verifyPayloadSignature } from '../console/sign-payload';
import { ApiProblem } from './api-problem';
import type { ConsoleBackend } from './console-api';

const unauthorized = (detail: string) =>
  new ApiProblem({ status: 401, slug: 'unsigned-request', title: 'Unauthorized', detail });

/** The payload text that was signed: the raw body for POST, `sig_payload` for GET and DELETE. */
function signedText(req: Request): string | undefined {
  if (req.method === 'POST') return typeof req.body === 'string' ? req.body : '';
  const value = req.query.sig_payload;
  return typeof value === 'string' ? value : undefined;
}

/** Checked against when the account is unknown, so both refusals take the same time. */
const NO_ACCOUNT_SECRET = randomBytes(32).toString('hex');
const REFUSED =
  'X-ACCT-ID and X-PAYLOAD-SIG do not match an account and its signature of the payload (spec 5.1).';

/**
 * Spec 5.1, checked over the exact bytes received, before anything else. An unknown account and a
 * wrong signature get the same answer, after the same work: the 401 must not tell which accounts exist.
 */
export function signedRequest(backend: ConsoleBackend): RequestHandler {
  return function signedRequest(req, res, next) {
    const text = signedText(req);
    if (text === undefined)
      return next(unauthorized('GET and DELETE must carry the signed payload as sig_payload.'));
    const accountId = req.get('X-ACCT-ID');
    const account = accountId === undefined ? undefined : backend.accounts.get(accountId);
    const signed = verifyPayloadSignature(
      text,
      account?.secretKey ?? NO_ACCOUNT_SECRET,
      req.get('X-PAYLOAD-SIG'),
    );
    if (account === undefined || !signed) return next(unauthorized(REFUSED));
    res.locals.accountId = account.accountId;
    next();
  };
}
