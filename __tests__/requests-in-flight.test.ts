import { requestsInFlight } from '../lib/core/dispatch/requests-in-flight';

/** Whether `promise` has settled once the microtasks queued so far have run. */
async function settledYet(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  return settled;
}

describe('requestsInFlight', () => {
  it('settles at once with none inside', async () => {
    const requests = requestsInFlight();
    expect(requests.size).toBe(0);
    expect(await settledYet(requests.settled())).toBe(true);
  });

  it.each([
    ['one request', 1],
    ['three requests', 3],
  ])('with %s inside, every waiter settles when the last leaves, not before', async (_name, n) => {
    const requests = requestsInFlight();
    for (let i = 0; i < n; i++) requests.enter();
    const waiters = [requests.settled(), requests.settled()];
    for (let i = 0; i < n - 1; i++) requests.leave();
    expect(requests.size).toBe(1);
    expect(await Promise.all(waiters.map(settledYet))).toEqual([false, false]);
    requests.leave();
    expect(requests.size).toBe(0);
    expect(await Promise.all(waiters.map(settledYet))).toEqual([true, true]);
  });

  it('a waiter that came after the count last reached zero waits for the next zero', async () => {
    const requests = requestsInFlight();
    requests.enter();
    requests.leave();
    requests.enter();
    const waiting = requests.settled();
    expect(await settledYet(waiting)).toBe(false);
    requests.leave();
    expect(await settledYet(waiting)).toBe(true);
  });
});
