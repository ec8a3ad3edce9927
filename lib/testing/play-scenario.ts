import { checkOptionKeys } from '../check-option-keys';
import { loadScenario } from '../events/load-scenario';
import { parseScenario } from '../events/parse-scenario';
import type { Scenario, ScenarioDelivery } from '../events/scenario';
import type { DeliveryResponse, Target } from './delivery-test';
import { sendEvent, type SendOptions } from './send-delivery';

/** Options of {@link playScenario}. */
export interface PlayScenarioOptions extends SendOptions {
  /**
   * `'fast'` sends each delivery as soon as the one before is answered; `'original'` first waits each
   * delivery's `delayMs`, as recorded. Defaults to `'fast'`.
   */
  timing?: 'fast' | 'original' | undefined;
  /**
   * How many more times a send answered with anything but 200 or 201 is sent again, at once, as the
   * Service retries it (spec section 6, rule 7); its expectation is then checked against the last
   * answer, as `trigger --scenario` checks the emulator's last attempt. So a file played through the
   * emulator plays the same here, a handler that fails once included. A whole number from 0 to
   * 100. Defaults to `0`: each send is checked as it was answered.
   */
  retries?: number | undefined;
}

/** One send of a played scenario and the answer it got. */
export interface PlayedDelivery {
  /** The delivery's index in the scenario's `deliveries`. */
  index: number;
  /** 0 for its first send, then 1, 2, … for its repeats. */
  repeat: number;
  /** The event id sent. */
  eventId: string;
  /** The status answered. */
  status: number;
  /** The answer's `status` field (`processed`, `duplicate`, `stale`, …), or null when it has none. */
  bodyStatus: string | null;
  /** How many times it was sent: 1, or more when `retries` sent it again after an answer other than 200 or 201. */
  attempts: number;
}

const OPTION_KEYS: readonly string[] = ['timing', 'retries', 'token', 'path'];
const RETRIES_LIMIT = 100;

/** What the Service counts as received (spec section 6, rule 7); any other answer it retries. */
const acknowledged = (response: DeliveryResponse) => response.status === 200 || response.status === 201;

const bodyStatus = (response: DeliveryResponse): string | null =>
  typeof response.body?.status === 'string' ? (response.body.status as string) : null;

/** What did not match, in words; undefined when everything expected was answered. */
function mismatch(delivery: ScenarioDelivery, response: DeliveryResponse): string | undefined {
  const { expect } = delivery;
  const wrong: string[] = [];
  if (expect?.status !== undefined && response.status !== expect.status)
    wrong.push(`status ${expect.status}`);
  if (expect?.body !== undefined && bodyStatus(response) !== expect.body.status)
    wrong.push(`body.status "${expect.body.status}"`);
  if (wrong.length === 0) return undefined;
  return `expected ${wrong.join(' and ')}, got ${response.status} ${response.text.slice(0, 500)}`;
}

/**
 * Sends a scenario's deliveries to `target` in order, each then its repeats, and checks every
 * expectation. The first mismatch throws, naming the delivery's index, its event and the answer;
 * otherwise resolves to every send with its answer. `scenario` is a file's path or a scenario object.
 */
export async function playScenario(
  target: Target,
  scenario: string | Scenario,
  options: PlayScenarioOptions = {},
): Promise<PlayedDelivery[]> {
  checkOptionKeys(options, OPTION_KEYS, 'playScenario');
  const { timing = 'fast', retries = 0, token, path } = options;
  if (timing !== 'fast' && timing !== 'original')
    throw new TypeError(
      `[service-webhooks] playScenario: timing must be 'fast' or 'original' (got ${JSON.stringify(timing)})`,
    );
  if (!Number.isSafeInteger(retries) || retries < 0 || retries > RETRIES_LIMIT)
    throw new TypeError(
      `[service-webhooks] playScenario: retries must be a whole number from 0 to ${RETRIES_LIMIT} (got ${JSON.stringify(retries)}); it is how many more times a failed send is sent again`,
    );
  const checked =
    typeof scenario === 'string'
      ? loadScenario(scenario, 'playScenario')
      : parseScenario(structuredClone(scenario), 'playScenario');
  const send: SendOptions = {
    ...(token === undefined ? {} : { token }),
    ...(path === undefined ? {} : { path }),
  };
  const played: PlayedDelivery[] = [];
  for (const [index, delivery] of checked.deliveries.entries()) {
    if (timing === 'original' && (delivery.delayMs ?? 0) > 0)
      await new Promise((resolve) => setTimeout(resolve, delivery.delayMs));
    for (let repeat = 0; repeat <= (delivery.repeat ?? 0); repeat++) {
      let response = await sendEvent(target, delivery.event, send);
      let attempts = 1;
      while (!acknowledged(response) && attempts <= retries) {
        response = await sendEvent(target, delivery.event, send);
        attempts++;
      }
      const wrong = mismatch(delivery, response);
      const which = `delivery ${index}${repeat === 0 ? '' : ` (repeat ${repeat})`}, ${delivery.event.type} [${delivery.event.id}]`;
      const tries = attempts === 1 ? '' : ` (after ${attempts} attempts)`;
      if (wrong !== undefined) throw new Error(`[service-webhooks] playScenario: ${which}: ${wrong}${tries}`);
      played.push({
        index,
        repeat,
        eventId: delivery.event.id,
        status: response.status,
        bodyStatus: bodyStatus(response),
        attempts,
      });
    }
  }
  return played;
}
