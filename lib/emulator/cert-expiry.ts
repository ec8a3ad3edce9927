import type { EmulatorTls } from './emulator-tls';
import type { EmitResult, EmulatorChange } from './emulator-types';

const DAY = 24 * 60 * 60 * 1000;
const TYPE = 'ag.webhook.cert_expiring';

/**
 * The data of `ag.webhook.cert_expiring` about the emulator's client certificate. The spec does not
 * show this type's data; these fields name what a receiver needs to act: which certificate, and when.
 */
export function certExpiringData(tls: EmulatorTls, now = Date.now()): Record<string, unknown> {
  if (tls.client === null) {
    throw new Error(`[service-webhooks] emulator: no client certificate to warn about: ${tls.missing ?? ''}`);
  }
  const { fingerprint, subject, notAfter } = tls.client;
  return {
    certificate_fingerprint: fingerprint,
    certificate_subject: subject,
    expires_at: notAfter.toISOString(),
    days_remaining: Math.max(0, Math.floor((notAfter.getTime() - now) / DAY)),
    metadata: {},
  };
}

/**
 * Emits `ag.webhook.cert_expiring` once, when a webhook subscribed to it becomes verified while the
 * client certificate expires within the configured window (`emitCertExpiring()` sends it any time).
 */
export function watchCertificateExpiry(
  emulator: {
    subscribe(listener: (change: EmulatorChange) => void): () => void;
    emitCertExpiring(): EmitResult;
  },
  tls: EmulatorTls,
): void {
  const client = tls.client;
  if (client === null) return;
  let sent = false;
  emulator.subscribe((change) => {
    if (sent || change.kind !== 'webhook' || !change.webhook.verified) return;
    if (!(change.webhook.subscribedEvents as string[]).includes(TYPE)) return;
    if (client.notAfter.getTime() - Date.now() > tls.expiringWithinMs) return;
    sent = true;
    // Not from inside the change feed's own call: emitting publishes to the same feed.
    setImmediate(() => emulator.emitCertExpiring());
  });
}
