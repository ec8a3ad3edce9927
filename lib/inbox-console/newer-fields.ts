import type { DeadLetter, Inbox, InboxStatus } from '../inbox/inbox';

/*
 * Fields and methods the inbox gains in this wave (per-handler state, issues, quarantine), read when
 * present so the console shows them as soon as the inbox has them, and shows nothing in their place
 * before.
 */

/** One handler's state in a dead letter. */
export interface HandlerState {
  ok: boolean;
  attempts: number;
  lastError?: string;
}

/** Dead letters grouped by what failed, as `inbox.issues()` gives them. */
export interface ConsoleIssue {
  key: string;
  type: string;
  handler: string | null;
  error: { name: string; message: string };
  count: number;
  firstSeen: Date | string;
  lastSeen: Date | string;
  sampleEventIds: string[];
}

/** Each handler's state, when the inbox keeps it per handler. */
export function handlersOf(letter: DeadLetter): Record<string, HandlerState> | undefined {
  const handlers = (letter as { handlers?: unknown }).handlers;
  return typeof handlers === 'object' && handlers !== null
    ? (handlers as Record<string, HandlerState>)
    : undefined;
}

/** Why it is a dead letter (`invalid`: quarantined), when the inbox says. */
export function reasonOf(letter: DeadLetter): string | undefined {
  const reason = (letter as { reason?: unknown }).reason;
  return typeof reason === 'string' ? reason : undefined;
}

/** How many events are quarantined, when the inbox's status counts them. */
export function quarantinedOf(status: InboxStatus): number | undefined {
  const quarantined = (status as { quarantined?: unknown }).quarantined;
  return typeof quarantined === 'number' ? quarantined : undefined;
}

/** Whether the inbox groups its dead letters into issues. */
export function hasIssues(inbox: Inbox): inbox is Inbox & { issues(): Promise<ConsoleIssue[]> } {
  return typeof (inbox as { issues?: unknown }).issues === 'function';
}

/**
 * Replays one handler of a dead letter: `replay(id, { handlers })`, which inboxes that keep state per
 * handler take. Only called for a letter whose `handlers` name it, so an inbox without it is never
 * asked (it would ignore the option and replay every handler).
 */
export function replayHandler(inbox: Inbox, id: string, handler: string): Promise<number> {
  const replay = inbox.replay as unknown as (
    target: string,
    options: { handlers: string[] },
  ) => Promise<number>;
  return replay.call(inbox, id, { handlers: [handler] });
}
