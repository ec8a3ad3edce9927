import { HttpProblem } from './http-problem';
import type { TokenCheck } from './token-verifier';

const REALM = 'Bearer realm="service-webhooks"';

/** The RFC 6750 answer for a failed token check; built per failure, which is never the hot path. */
export function unauthorized(check: Exclude<TokenCheck, 'valid'>): HttpProblem {
  const details: Record<typeof check, { header: string; detail: string }> = {
    missing: {
      header: REALM,
      detail:
        'No bearer token: send "Authorization: Bearer <token>" with the token the Service generated for this webhook.',
    },
    malformed: {
      header: `${REALM}, error="invalid_request"`,
      detail: 'The Authorization header is not of the form "Bearer <token>".',
    },
    invalid: {
      header: `${REALM}, error="invalid_token"`,
      detail: "The bearer token is not one this receiver accepts; check it matches the webhook's token.",
    },
  };
  const { header, detail } = details[check];
  return new HttpProblem({
    status: 401,
    slug: check === 'missing' ? 'missing-token' : 'invalid-token',
    title: 'Unauthorized',
    detail,
    field: 'Authorization',
    headers: { 'WWW-Authenticate': header },
    closeConnection: true,
  });
}
