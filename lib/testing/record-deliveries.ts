import { checkOptionKeys } from '../check-option-keys';
import type { DeliveryListener, DeliveryRecord } from '../core/delivery-record';
import type { DeliveryEnvelope } from '../events/build-event';
import { createScenarioWriter } from '../events/scenario-writer';

/** Options of {@link recordDeliveries}. */
export interface RecordDeliveriesOptions {
  /** The scenario file to write; created (or replaced) at once, rewritten after each delivery. Required. */
  file: string;
  /** More data fields to redact, beside the spec's personal ones (`PERSONAL_FIELDS`). Defaults to none. */
  redact?: readonly string[];
  /** What the scenario shows, written as its `description`. Optional. */
  description?: string;
}

const OPTION_KEYS: readonly string[] = ['file', 'redact', 'description'];

/**
 * A receiver's `onDelivery` that records every delivery whose event was read to a scenario file, in
 * the order answered, each redacted (the spec's personal fields, and `redact`) with its answer as the
 * expectation. Only the event is written: never a header, a token or a certificate. Refusals before
 * the event is read (a 401, a 413) are not recorded; they have no event to play.
 */
export function recordDeliveries(options: RecordDeliveriesOptions): DeliveryListener {
  checkOptionKeys(options, OPTION_KEYS, 'recordDeliveries');
  if (typeof options.file !== 'string' || options.file === '')
    throw new TypeError(
      '[service-webhooks] recordDeliveries: file must be the path of the scenario file to write',
    );
  if (
    options.redact !== undefined &&
    !(Array.isArray(options.redact) && options.redact.every((f) => typeof f === 'string'))
  )
    throw new TypeError('[service-webhooks] recordDeliveries: redact must be a list of data field names');
  const writer = createScenarioWriter(options.file, {
    redact: options.redact ?? [],
    ...(options.description === undefined ? {} : { description: options.description }),
  });
  const read = new WeakMap<DeliveryRecord, DeliveryEnvelope>();
  const listener: DeliveryListener = (record) => {
    const event = read.get(record);
    if (event === undefined) return;
    writer.add({
      event,
      at: Date.now(),
      status: record.status,
      // The acknowledgement's body.status is the outcome; a problem carries none.
      bodyStatus: record.status === 200 || record.status === 201 ? record.outcome : null,
    });
  };
  listener.onEvent = (envelope, record) => void read.set(record, envelope as unknown as DeliveryEnvelope);
  return listener;
}
