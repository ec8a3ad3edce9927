import type { EventHandler, HandlerContext } from '../../events/event-router';
import type { AnyWebhookEvent } from '../../events/webhook-event';

/** Handlers already warned about: one warning per handler function for the life of the process. */
const warned = new WeakSet<EventHandler<AnyWebhookEvent>>();

/**
 * A handler's return value is ignored: it succeeds by returning or resolving, and refuses the event
 * only by throwing. A value back (`return false` meaning "not handled", `return res.status(200)` from
 * Express habits) means its author expects something else to happen, so say once per handler, outside
 * production, what the contract is. Only reached when a handler returned something: the common path
 * pays one `!== undefined`.
 */
export function warnReturnedValue(
  handler: EventHandler<AnyWebhookEvent>,
  value: unknown,
  event: AnyWebhookEvent,
  ctx: HandlerContext,
): void {
  if (warned.has(handler) || process.env.NODE_ENV === 'production') return;
  warned.add(handler);
  // Booleans and numbers say themselves; anything else only its kind (a string may hold anything).
  const kind =
    typeof value === 'boolean' || typeof value === 'number'
      ? String(value)
      : value === null
        ? 'null'
        : typeof value === 'object'
          ? 'an object'
          : `a ${typeof value}`;
  ctx.logger.warn(
    { type: event.type, handler: handler.name === '' ? '(anonymous)' : handler.name, returned: kind },
    `a handler returned ${kind}, which the receiver ignores: a handler succeeds by returning nothing (or resolving) and refuses the event only by throwing (throw to have it retried; this warning is shown once per handler, and not when NODE_ENV=production)`,
  );
}
