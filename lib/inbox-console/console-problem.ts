import type { ConsoleAnswer } from './console-request';

/** The headers of every console answer: nothing cached, nothing sniffed, never framed. */
export const BASE_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
};

/**
 * An RFC 9457 problem+json answer, typed `urn:service-webhooks:problem:<slug>` as the receiver's are;
 * `detail` says what went wrong and what to do.
 */
export function consoleProblem(
  status: number,
  slug: string,
  title: string,
  detail: string,
  headers: Record<string, string> = {},
): ConsoleAnswer {
  const body = JSON.stringify({
    type: `urn:service-webhooks:problem:${slug}`,
    title,
    status,
    detail: `[service-webhooks] ${detail}`,
  });
  return {
    status,
    headers: { ...BASE_HEADERS, 'Content-Type': 'application/problem+json; charset=utf-8', ...headers },
    body,
  };
}
