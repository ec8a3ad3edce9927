import { createEventRouter, type Inbox } from '../../lib';
import { delivery, issued, TOKEN } from './contract-rows';
import { fetchDoor } from './doors';

/**
 * Sends `count` events through a receiver on `inbox` and expects each answered `200 queued`; the
 * receiver is pushed to `opened` (closed by the test). Resolves the events' ids.
 */
export async function queueHeld(
  inbox: Inbox,
  count: number,
  prefix: string,
  opened: { close(): Promise<void> }[],
): Promise<string[]> {
  const door = await fetchDoor.open({
    bearerTokens: [TOKEN],
    router: createEventRouter(),
    logger: false,
    inbox,
  });
  opened.push(door);
  const ids = Array.from({ length: count }, (_, i) => `evt_${prefix}_${i}`);
  const answers = await Promise.all(ids.map((id) => door.send(delivery(issued({}, id)))));
  expect(answers.map((a) => [a.status, JSON.parse(a.text).status])).toEqual(ids.map(() => [200, 'queued']));
  return ids;
}
