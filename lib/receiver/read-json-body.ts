import type { Request } from 'express';
import getRawBody from 'raw-body';
import sjson from 'secure-json-parse';
import { HttpProblem } from './http-problem';

/** `__proto__` keys and `constructor.prototype` chains are dropped wherever they appear. */
export const SAFE_JSON = { protoAction: 'remove', constructorAction: 'remove' } as const;

interface RawBodyError {
  type?: string;
}

function badRequest(slug: string, detail: string): HttpProblem {
  return new HttpProblem({ status: 400, slug, title: 'Bad Request', detail });
}

function parseText(text: string): unknown {
  if (text.trim() === '') {
    throw badRequest('empty-body', 'The request body is empty; expected a JSON object.');
  }
  try {
    return sjson.parse(text, undefined, SAFE_JSON);
  } catch (error) {
    const where = error instanceof Error ? error.message : 'unknown position';
    throw badRequest('invalid-json', `The request body is not valid JSON: ${where}.`);
  }
}

/** A body another middleware already read: `express.json()`, `.text()`, `.raw()` or the app's own. */
function fromParsed(body: unknown): unknown {
  if (Buffer.isBuffer(body)) return parseText(body.toString('utf8'));
  if (typeof body === 'string') return parseText(body);
  if (typeof body === 'object' && body !== null) return sjson.scan(body, SAFE_JSON) ?? body;
  throw badRequest(
    'body-consumed',
    'The request body was read by another middleware but not left in req.body; mount the receiver before that middleware or have it store the body.',
  );
}

function readProblem(error: unknown, limit: number): HttpProblem {
  const type = (error as RawBodyError | undefined)?.type;
  if (type === 'entity.too.large') {
    return new HttpProblem({
      status: 413,
      slug: 'body-too-large',
      title: 'Content Too Large',
      detail: `The request body exceeds the receiver's limit of ${limit} bytes.`,
      closeConnection: true,
    });
  }
  if (type === 'request.size.invalid') {
    return badRequest('body-length-mismatch', 'The request body does not match its Content-Length.');
  }
  if (type === 'request.aborted') return badRequest('body-aborted', 'The client aborted the request body.');
  return badRequest('body-unreadable', 'The request body could not be read.');
}

/**
 * Reads and parses a JSON body of at most `limit` bytes. A declared Content-Length over the limit is
 * refused before reading; a chunked body is cut off as soon as it passes the limit.
 */
export async function readJsonBody(req: Request, limit: number): Promise<unknown> {
  const parsedBySomeoneElse = (req as { _body?: unknown })._body === true || req.readableEnded;
  if (parsedBySomeoneElse) return fromParsed(req.body);
  let text: string;
  try {
    text = await getRawBody(req, { length: req.headers['content-length'], limit, encoding: 'utf-8' });
  } catch (error) {
    throw readProblem(error, limit);
  }
  return parseText(text);
}
