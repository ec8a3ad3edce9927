import { contentType as contentTypeModule } from '../../lazy-content-type';
import { HttpProblem } from '../http-problem';

const STRUCTURED_TYPES = new Set(['application/cloudevents+json', 'application/json']);
const UTF8 = new Set(['utf-8', 'utf8']);
/** The common header values, answered without parsing. */
const KNOWN_GOOD = new Set([
  'application/cloudevents+json',
  'application/cloudevents+json; charset=utf-8',
  'application/json',
  'application/json; charset=utf-8',
]);

function unsupported(detail: string, field = 'Content-Type'): HttpProblem {
  return new HttpProblem({
    status: 415,
    slug: 'unsupported-media-type',
    title: 'Unsupported Media Type',
    detail: `${detail} Send application/cloudevents+json or application/json, in UTF-8, without Content-Encoding.`,
    field,
    headers: { 'Accept-Post': 'application/cloudevents+json, application/json' },
    closeConnection: true,
  });
}

/**
 * Refuses a body we would misread: a `Content-Encoding` other than identity (we do not inflate, so a
 * gzip body is 415, not a misleading 400, and a plain body labelled gzip is not believed), a media
 * type that is not JSON, a charset that is not UTF-8. `binary` is CloudEvents binary mode, where the
 * body is the event's data and may be any JSON media type.
 */
export function checkContent(
  contentType: string | undefined,
  contentEncoding: string | undefined,
  binary: boolean,
): void {
  if (contentEncoding !== undefined && contentEncoding.trim().toLowerCase() !== 'identity') {
    throw unsupported(`Content-Encoding ${contentEncoding} is not accepted.`, 'Content-Encoding');
  }
  if (contentType === undefined) throw unsupported('The request has no Content-Type.');
  // As senders spell it, then in any case: the lowercase copy is made only for the unusual spellings.
  if (!binary && (KNOWN_GOOD.has(contentType) || KNOWN_GOOD.has(contentType.toLowerCase()))) return;
  // Loaded outside the try: a module that fails to load is the receiver's 500 (retried), not a
  // Content-Type the sender wrote wrong (415, which a sender may never retry).
  const { parse } = contentTypeModule();
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(contentType);
  } catch {
    throw unsupported('The Content-Type header cannot be parsed.');
  }
  const json = binary
    ? parsed.type === 'application/json' || parsed.type.endsWith('+json')
    : STRUCTURED_TYPES.has(parsed.type);
  if (!json) throw unsupported(`Content-Type ${parsed.type} is not accepted.`);
  const charset = parsed.parameters.charset?.toLowerCase();
  if (charset !== undefined && !UTF8.has(charset)) throw unsupported(`Charset ${charset} is not accepted.`);
}
