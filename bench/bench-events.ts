import { buildEvent } from '../lib/testing';

/** One delivery body (~1.5 KB, layout A) with a placeholder id, so every request can carry a new one. */
export const TEMPLATE = JSON.stringify(
  buildEvent(
    'ag.access_pass.devices.added',
    { metadata: { employee_number: 'E-100234', department: 'Research', floor: 4, badge_color: 'blue' } },
    { id: '__EVENT_ID__' },
  ),
);

/** The body of the `n`th event: the template with a distinct id. */
export function eventBody(n: number, prefix = 'evt'): string {
  return TEMPLATE.replace('__EVENT_ID__', `${prefix}_${n.toString(36)}`);
}

export const TOKEN = 'tok_bench';
