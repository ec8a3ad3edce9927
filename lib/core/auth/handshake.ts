import { HttpProblem } from '../http-problem';
import { decodeUtf8 } from '../event/parse-json-body';
import type { RateLimitedLog } from '../../rate-limited-log';
import type { TokenCheck, TokenVerifier } from './token-verifier';
import { unauthorized } from '../problems';
import type { Answer, WebhookRequest } from '../webhook-request';

/** The header that marks a verification handshake (spec 5.3). */
export const CHALLENGE_HEADER = 'x-service-webhook-challenge';

/** A challenge is echoed back, so only a short run of visible ASCII is ever accepted. */
const VALID_CHALLENGE = /^[\x21-\x7e]{1,512}$/;
/** The handshake may come before any token is checked, so its body is kept small. */
const HANDSHAKE_BODY_LIMIT = 4096;

interface HandshakeSettings {
  /** Checks the handshake's bearer token when it carries one (or always, with `requireToken`). */
  verifier: TokenVerifier | undefined;
  requireToken: boolean;
  bodyTimeoutMs: number;
  warn: RateLimitedLog;
}

function badChallenge(detail: string): HttpProblem {
  return new HttpProblem({
    status: 400,
    slug: 'invalid-challenge',
    title: 'Bad Request',
    detail,
    field: 'challenge',
  });
}

function eventWithChallenge(): HttpProblem {
  return badChallenge(
    'A handshake must not carry a CloudEvent (a specversion in the body or ce-* headers): send the event without X-Service-Webhook-Challenge.',
  );
}

async function readChallenge(
  request: WebhookRequest,
  headerValue: string,
  timeoutMs: number,
): Promise<string> {
  if (request.hasHeaderPrefix('ce-')) {
    // A binary-mode event (its attributes in ce-* headers) echoed as a handshake would be
    // acknowledged with no handler run, and the Service would never send it again.
    throw eventWithChallenge();
  }
  let challenge: unknown = headerValue;
  let body: unknown;
  const { parsed } = request.body;
  if (parsed !== undefined) {
    body = parsed.value;
  } else if (request.body.hasBody) {
    const bytes = await request.body.read(HANDSHAKE_BODY_LIMIT, timeoutMs);
    // A body that is not JSON falls back to the header; one that is too large or slow is refused.
    try {
      body = JSON.parse(decodeUtf8(bytes));
    } catch {
      body = undefined;
    }
  }
  if (typeof body === 'object' && body !== null && 'specversion' in body) {
    // An event sent with the challenge header must not be acknowledged by an echo: its handlers
    // would never run. Refused, so the sender sees the mistake and the event is retried.
    throw eventWithChallenge();
  }
  if (typeof body === 'object' && body !== null && 'challenge' in body) {
    challenge = (body as { challenge: unknown }).challenge;
  }
  if (typeof challenge !== 'string' || challenge.trim() === '') {
    throw badChallenge(
      'The handshake carries no challenge: expected {"challenge": "<token>"} or the X-Service-Webhook-Challenge header.',
    );
  }
  if (!VALID_CHALLENGE.test(challenge)) {
    throw badChallenge('The challenge must be 1 to 512 visible ASCII characters; it was not echoed.');
  }
  return challenge;
}

function echo(challenge: string): Answer {
  return {
    status: 200,
    headers: {
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'X-Service-Webhook-Challenge': challenge,
      'Content-Type': 'application/json; charset=utf-8',
    },
    body: JSON.stringify({ challenge }),
  };
}

function refuse(check: Exclude<TokenCheck, 'valid'>, options: HandshakeSettings): never {
  options.warn(
    'warn',
    `handshake-${check}`,
    { check },
    check === 'missing'
      ? 'refused a handshake without a bearer token (requireTokenOnHandshake is on); the webhook stays unverified'
      : `refused a handshake whose bearer token is ${check === 'unavailable' ? 'uncheckable: the token source failed' : 'not one this receiver accepts'}; the webhook stays unverified. Is the receiver configured with the webhook's current token?`,
  );
  throw unauthorized(check);
}

/**
 * Step 1 as a plain function: the answer to a verification handshake, or `undefined` when the request
 * is not one (it then goes on to the delivery steps).
 */
export function answerHandshake(
  request: WebhookRequest,
  options: HandshakeSettings,
): Promise<Answer> | undefined {
  const headerValue = request.header(CHALLENGE_HEADER);
  if (request.method !== 'POST' || headerValue === undefined) return undefined;
  const authorization = request.header('authorization');
  const { verifier } = options;
  if (verifier === undefined || (!options.requireToken && authorization === undefined)) {
    return readChallenge(request, headerValue, options.bodyTimeoutMs).then(echo);
  }
  const check = verifier.check(authorization);
  const go = async (result: TokenCheck) => {
    if (result !== 'valid') refuse(result, options);
    return readChallenge(request, headerValue, options.bodyTimeoutMs).then(echo);
  };
  return typeof check === 'string' ? go(check) : check.then(go);
}
