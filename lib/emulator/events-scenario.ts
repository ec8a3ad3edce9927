import { detectLayout } from '../events/normalize-event';
import { createRedactor } from '../events/redact-event';
import { SCENARIO_VERSION, type Scenario } from '../events/scenario';
import type { Emulator } from './emulator';

/**
 * The events the emulator keeps, oldest first, as a scenario (the web console's "Export as scenario"):
 * each event redacted as a recording is, sent again as many times as it was delivered to its first
 * webhook. No expectation is written: the emulator's answers came from whatever receiver listened.
 */
export function eventsScenario(emulator: Emulator): Scenario {
  const redact = createRedactor();
  return {
    scenarioVersion: SCENARIO_VERSION,
    description: `exported from the emulator at ${emulator.url}`,
    deliveries: emulator.events.map((kept) => {
      const event = redact(kept);
      const deliveries = emulator.deliveries.filter((d) => d.eventId === kept.id);
      const first = deliveries[0]?.webhookId;
      const repeat = Math.min(deliveries.filter((d) => d.webhookId === first).length - 1, 100);
      return { event, layout: detectLayout(event, event.data), ...(repeat > 0 ? { repeat } : {}) };
    }),
  };
}
