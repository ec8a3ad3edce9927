import type { DeliveryEnvelope } from './build-event';
import type { Layout } from './webhook-event';

/** The version of the scenario file format this package writes and reads. */
export const SCENARIO_VERSION = 1;

/** What a delivery of a scenario expects back; each field left out is not checked. */
export interface ScenarioExpectation {
  /** The HTTP status the receiver answers. */
  status?: number;
  /** The answer's JSON body: only its `status` (`processed`, `duplicate`, `stale`, …) is compared. */
  body?: {
    /** The acknowledgement's `status`: `processed`, `duplicate`, `stale`, `unhandled` or `queued`. */
    status: string;
  };
}

/** One delivery of a scenario: an event, sent once and then `repeat` more times. */
export interface ScenarioDelivery {
  /** The event as the Service sends it (as `buildEvent` builds it, or as recorded). */
  event: DeliveryEnvelope;
  /** The event's layout, `'A'` or `'B'`; checked against the event's own signs (spec 9). */
  layout: Layout;
  /** How long to wait before sending it, in milliseconds, with `timing: 'original'`. Defaults to 0. */
  delayMs?: number;
  /** How many more times the same event is sent right after, as the Service's redeliveries. Defaults to 0. */
  repeat?: number;
  /** What each of its sends expects back (a repeat included). Defaults to nothing checked. */
  expect?: ScenarioExpectation;
}

/** A scenario file: an ordered list of deliveries, in JSON (docs/scenarios.md). */
export interface Scenario {
  /** The file format's version: {@link SCENARIO_VERSION}. */
  scenarioVersion: typeof SCENARIO_VERSION;
  /** What it shows, in words. Optional. */
  description?: string;
  /** The deliveries, in the order they are sent. */
  deliveries: ScenarioDelivery[];
}
