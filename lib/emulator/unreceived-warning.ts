import type { DeliveryEnvelope } from '../events/build-event';
import type { EmulatedWebhook } from './emulator-types';

/** Why a webhook is not verified, in a few words a person can act on. */
function handshakeReason(webhook: EmulatedWebhook): string {
  const last = webhook.lastHandshake;
  if (last === null) return 'no handshake answered yet';
  const status = last.status === null ? 'no answer' : `answered ${last.status}`;
  return `last handshake ${status}${last.reason === null || last.reason.startsWith('answered') ? '' : `: ${last.reason}`}`;
}

/**
 * The warning for an event no verified webhook receives: on the way from zero to verified this is
 * where events silently went nowhere, so it names each unverified subscriber and why.
 */
export function unreceivedWarning(
  event: DeliveryEnvelope,
  webhooks: readonly EmulatedWebhook[],
): { message: string; meta: Record<string, unknown> } {
  const unverified = webhooks.filter(
    (w) => !w.verified && (w.subscribedEvents as string[]).includes(event.type),
  );
  const meta = {
    eventId: event.id,
    type: event.type,
    unverified: unverified.map((w) => ({ id: w.id, url: w.url, lastHandshake: w.lastHandshake })),
  };
  if (unverified.length === 0) {
    return {
      meta,
      message: `emulator: event ${event.type} ${event.id} was delivered nowhere: no webhook subscribes to ${event.type}`,
    };
  }
  const list = unverified.map((w) => `${w.id} at ${w.url} (${handshakeReason(w)})`).join('; ');
  return {
    meta,
    message: `emulator: event ${event.type} ${event.id} was delivered nowhere: its subscribers are not verified: ${list}. Start the app with the webhook's token, then verify the webhook again (verifyWebhook).`,
  };
}
