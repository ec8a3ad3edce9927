import type { Inbox } from './inbox';

/**
 * The writing methods of a read-only inbox (the CLI's `inbox status` and `dead-letters`): each
 * rejects, naming the writable inbox to open instead, so a reading command can never write by mistake.
 */
export function readOnlyRefusals(
  writable: string,
): Pick<Inbox, 'enqueue' | 'startWorker' | 'replay' | 'pause' | 'resume'> {
  const refuse = (what: string) => () =>
    Promise.reject(new Error(`[service-webhooks] inbox: ${what} needs a writable inbox (${writable})`));
  return {
    enqueue: refuse('enqueue'),
    startWorker: refuse('startWorker'),
    replay: refuse('replay'),
    pause: refuse('pause'),
    resume: refuse('resume'),
  };
}
