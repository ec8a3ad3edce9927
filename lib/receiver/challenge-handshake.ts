import type { Request, RequestHandler } from 'express';
import { OptionsError } from '../options-error';
import { HttpProblem } from './http-problem';
import { readJsonBody } from './read-json-body';
import { createTokenVerifier, type TokenVerifier } from './token-verifier';
import { unauthorized } from './unauthorized';

/** The header that marks a verification handshake (spec 5.3). */
export const CHALLENGE_HEADER = 'x-service-webhook-challenge';

/** A challenge is echoed back, so only a short run of visible ASCII is ever accepted. */
const VALID_CHALLENGE = /^[\x21-\x7e]{1,512}$/;
const HANDSHAKE_BODY_LIMIT = 4096;

export interface ChallengeHandshakeOptions {
  /**
   * Tokens a handshake's `Authorization: Bearer` header is checked against when it carries one (the
   * same tokens as `bearerAuth`). Without them a handshake's `Authorization` header is not checked.
   * Defaults to none.
   */
  tokens?: readonly string[];
  /**
   * Refuse a handshake without a valid bearer token. The spec does not say the Service sends one on
   * the handshake, so this is off unless you know it does. Requires `tokens`. Defaults to `false`.
   */
  requireToken?: boolean;
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

async function readChallenge(req: Request, headerValue: string): Promise<string> {
  const hasBody = req.headers['content-length'] !== '0' && req.headers['content-length'] !== undefined;
  const chunked = req.headers['transfer-encoding'] !== undefined;
  let challenge: unknown = headerValue;
  if (hasBody || chunked || req.readableEnded) {
    // A body that is not JSON falls back to the header; one that is too large is refused.
    const body = await readJsonBody(req, HANDSHAKE_BODY_LIMIT).catch((error: unknown) => {
      if (error instanceof HttpProblem && error.status === 413) throw error;
      return undefined;
    });
    if (typeof body === 'object' && body !== null && 'challenge' in body) {
      challenge = (body as { challenge: unknown }).challenge;
    }
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

/**
 * Step 1: answers the Service's verification handshake by echoing its challenge; every other request
 * passes on untouched.
 */
export function challengeHandshake(options: ChallengeHandshakeOptions = {}): RequestHandler {
  const requireToken = options.requireToken ?? false;
  if (typeof requireToken !== 'boolean') {
    throw new OptionsError('ERR_SW_OPTION', 'challengeHandshake', 'requireToken must be a boolean');
  }
  const verifier: TokenVerifier | undefined =
    options.tokens === undefined ? undefined : createTokenVerifier(options.tokens, 'challengeHandshake');
  if (requireToken && verifier === undefined) {
    throw new OptionsError(
      'ERR_SW_TOKENS',
      'challengeHandshake',
      'requireToken: true needs tokens to check against; pass the same tokens as bearerAuth',
    );
  }

  return function challengeHandshake(req, res, next) {
    const headerValue = req.headers[CHALLENGE_HEADER];
    if (req.method !== 'POST' || typeof headerValue !== 'string') return next();

    const authorization = req.headers.authorization;
    if (verifier !== undefined && (requireToken || authorization !== undefined)) {
      const check = verifier.check(authorization);
      if (check !== 'valid') return next(unauthorized(check));
    }

    readChallenge(req, headerValue).then((challenge) => {
      res.status(200);
      res.setHeader('Cache-Control', 'no-store');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('X-Service-Webhook-Challenge', challenge);
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(JSON.stringify({ challenge }));
    }, next);
  };
}
