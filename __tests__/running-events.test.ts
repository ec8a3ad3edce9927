import { runningEvents, type RunningEvent } from '../lib/core/dispatch/running-events';

describe('runningEvents', () => {
  it('holds what a Map would, by key', () => {
    const running = runningEvents();
    const done = Promise.resolve();
    running.set('k1', { eventId: 'e1', done });
    running.set('k2', { eventId: 'e2', done });
    expect(running.size).toBe(2);
    expect(running.has('k1')).toBe(true);
    expect([...running.values()].map((r) => r.eventId)).toEqual(['e1', 'e2']);
    running.delete('k1');
    running.delete('absent');
    expect(running.has('k1')).toBe(false);
    expect([...running.values()].map((r) => r.eventId)).toEqual(['e2']);
  });

  it('empties an entry as it leaves, deleted or replaced, so nothing keeps its promise through it', () => {
    const running = runningEvents();
    const pending = new Promise(() => undefined);
    const first: RunningEvent = { eventId: 'e1', done: pending };
    running.set('k', first);
    const second: RunningEvent = { eventId: 'e1', done: pending };
    running.set('k', second);
    expect(first.done).not.toBe(pending);
    expect(first.eventId).toBe('');
    expect([...running.values()]).toEqual([second]);
    running.delete('k');
    expect(second.done).not.toBe(pending);
    expect(running.size).toBe(0);
  });
});
