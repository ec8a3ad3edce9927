import { HttpProblem } from './http-problem';
import type { TokenCheck } from './token-verifier';

const REALM = 'Bearer realm="service-webhooks"';

const DETAILS = {
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
} as const;

/** The answer for a failed token check: RFC 6750 401s, or 503 when the token source itself failed. */
export function unauthorized(check: Exclude<TokenCheck, 'valid'>, retryAfter = '30'): HttpProblem {
  if (check === 'unavailable') {
    return new HttpProblem({
      status: 503,
      slug: 'tokens-unavailable',
      title: 'Service Unavailable',
      detail: 'The receiver cannot read its bearer tokens right now; retry later.',
      headers: { 'Retry-After': retryAfter },
      closeConnection: true,
    });
  }
  const { header, detail } = DETAILS[check];
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
