import type { AttemptRecord, EmulatedWebhook } from '../emulator/emulator-types';
import { escapeControl } from '../logger';
import type { Output } from './output';

const clock = () => new Date().toISOString().slice(11, 19);

function parseAnswer(text: string | null): { status?: unknown; detail?: unknown } | null {
  try {
    return JSON.parse(text ?? 'null') as { status?: unknown; detail?: unknown } | null;
  } catch {
    return null;
  }
}

/** What the receiver said it did: the `status` of its acknowledgement, or its problem `detail`. */
function answerSummary(attempt: AttemptRecord): string {
  const body = parseAnswer(attempt.responseBody);
  if (attempt.status === 200 || attempt.status === 201)
    return typeof body?.status === 'string' ? body.status : 'acknowledged';
  const why = attempt.error ?? (typeof body?.detail === 'string' ? body.detail : 'no problem detail');
  return `${why}; ${attempt.outcome === 'retrying' ? 'will retry' : attempt.outcome}`;
}

/*
 * Each line is escaped whole before it is coloured: the event's id and type, the URL and what the
 * receiver answered are the sender's and the receiver's bytes, never a terminal's commands.
 */

/** `--> ag.access_pass.issued [evt_…]`, as the attempt leaves. */
export function sendingLine(out: Output, type: string, eventId: string): string {
  return `${out.dim(clock())}  ${escapeControl(`--> ${type} [${eventId}]`)}`;
}

/** `<-- [200] POST http://… (12 ms) processed`, failures in red. */
export function attemptLine(out: Output, attempt: AttemptRecord): string {
  const ok = attempt.status === 200 || attempt.status === 201;
  const status = attempt.status === null ? '---' : String(attempt.status);
  const text = escapeControl(
    `<-- [${status}] POST ${attempt.url} (${attempt.durationMs} ms) ${answerSummary(attempt)}`,
  );
  return `${out.dim(clock())}  ${ok ? out.green(text) : out.red(text)}`;
}

/** Why a handshake failed, and what to check. */
export function handshakeFailure(webhook: Omit<EmulatedWebhook, 'privateKey'>, token: string): string {
  const last = webhook.lastHandshake;
  const answer = last === null || last.status === null ? 'no answer' : `[${last.status}]`;
  const reason =
    last?.reason && !last.reason.startsWith('answered') ? `: ${last.reason.replace(/\.$/, '')}` : '';
  return escapeControl(
    `Handshake to ${webhook.url} failed, ${answer}${reason}. Is the app running with this token (${token})? Retrying every 2 s.`,
  );
}
