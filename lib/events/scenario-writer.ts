import { renameSync, writeFileSync } from 'node:fs';
import type { DeliveryEnvelope } from './build-event';
import { detectLayout } from './normalize-event';
import { SCENARIO_LIMITS } from './parse-scenario';
import { createRedactor } from './redact-event';
import { SCENARIO_VERSION, type Scenario, type ScenarioDelivery } from './scenario';

/** What arrived and how it was answered, as a recorder saw it. */
export interface ArrivedDelivery {
  /** The event as sent. Only its CloudEvents attributes and data are written, never a header. */
  event: DeliveryEnvelope;
  /** When it arrived, in milliseconds since the epoch. */
  at: number;
  /** The status answered; null when there was no answer (nothing is then expected of it). */
  status: number | null;
  /** The answer's JSON `status` field, or null when it had none. */
  bodyStatus: string | null;
}

/** Options of {@link createScenarioWriter}. */
export interface ScenarioWriterOptions {
  /** More data fields to redact, beside the spec's personal ones (`PERSONAL_FIELDS`). Defaults to none. */
  redact?: readonly string[];
  /** What the scenario shows, written as its `description`. Optional. */
  description?: string;
}

/**
 * Records deliveries to a scenario file, in the order they arrive, each with its delay since the one
 * before and what it was answered as its expectation. Every event is redacted (`createRedactor`, one
 * key per file, so a redelivery stays the same event). The file is rewritten whole after each
 * delivery, through a temporary file and a rename, so it is always a valid scenario, even after a
 * Ctrl-C. Past `SCENARIO_LIMITS.deliveries`, `add` returns false and records nothing more.
 */
export function createScenarioWriter(
  file: string,
  options: ScenarioWriterOptions = {},
): { add(arrived: ArrivedDelivery): boolean; readonly count: number } {
  const redact = createRedactor({ fields: options.redact ?? [] });
  const scenario: Scenario = {
    scenarioVersion: SCENARIO_VERSION,
    ...(options.description === undefined ? {} : { description: options.description }),
    deliveries: [],
  };
  let last: number | undefined;
  const write = () => {
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(scenario, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, file);
  };
  write();
  return {
    get count() {
      return scenario.deliveries.length;
    },
    add({ event, at, status, bodyStatus }) {
      if (scenario.deliveries.length >= SCENARIO_LIMITS.deliveries) return false;
      const delayMs = Math.min(Math.max(0, last === undefined ? 0 : at - last), SCENARIO_LIMITS.delayMs);
      last = at;
      // Only the CloudEvents attributes the spec names, whatever else the object carries.
      const { specversion, id, source, type, datacontenttype, dataschema, time, data } = event;
      const redacted = redact({
        specversion,
        id,
        source,
        type,
        datacontenttype,
        ...(dataschema === undefined ? {} : { dataschema }),
        time,
        data,
      });
      const delivery: ScenarioDelivery = {
        event: redacted,
        layout: detectLayout(redacted, redacted.data),
        ...(delayMs > 0 ? { delayMs } : {}),
        ...(status === null
          ? {}
          : { expect: { status, ...(bodyStatus === null ? {} : { body: { status: bodyStatus } }) } }),
      };
      scenario.deliveries.push(delivery);
      write();
      return true;
    },
  };
}
