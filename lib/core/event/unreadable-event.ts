import type { HttpProblem } from '../http-problem';
import type { CloudEventEnvelope } from './cloud-event-envelope';

/**
 * A well-formed CloudEvent whose data this code cannot read (a field of the wrong type, a missing
 * required one, a broken per-type rule), thrown by the event reader only for a receiver with
 * `quarantine: true`, so the core can keep it in the inbox's dead letters instead of refusing it.
 * `problem` is the 400 answered without a quarantine.
 */
export class UnreadableEvent extends Error {
  constructor(
    readonly problem: HttpProblem,
    readonly envelope: CloudEventEnvelope,
    readonly raw: Readonly<Record<string, unknown>>,
  ) {
    super(problem.detail);
    this.name = 'UnreadableEvent';
  }
}
