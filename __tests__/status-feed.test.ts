import type { InboxStatus } from '../lib';
import { resolveLogger } from '../lib/logger';
import type { EventSink } from '../lib/inbox-console/console-request';
import {
  MAX_STREAM_BUFFER,
  MAX_STREAMS,
  MAX_STREAMS_PER_CLIENT,
  POLL_MS,
  StatusFeed,
} from '../lib/inbox-console/status-feed';

const STATUS: InboxStatus = {
  paused: false,
  waiting: 3,
  delayed: 0,
  active: 1,
  dead: 2,
  oldestAgeMs: 40,
  oldestDelayedAgeMs: null,
};

/** A sink that keeps what it was sent, with as many unsent bytes as `backlog` says. */
function fakeSink(backlog = 0) {
  const listeners: (() => void)[] = [];
  const sink = {
    written: [] as string[],
    ended: false,
    backlog,
    write: (text: string) => void sink.written.push(text),
    buffered: () => sink.backlog,
    end: () => {
      sink.ended = true;
      for (const listener of listeners.splice(0)) listener();
    },
    onClose: (listener: () => void) => void listeners.push(listener),
  };
  return sink;
}

/** Opens a stream for `client` on a sink; the 503 problem's status when refused. */
function open(feed: StatusFeed, client: string, sink: EventSink): number {
  const answer = feed.open(client);
  if ('stream' in answer) answer.stream(sink);
  return answer.status;
}

describe('StatusFeed', () => {
  let reads = 0;
  let status = STATUS;
  let feed: StatusFeed;
  beforeEach(() => {
    jest.useFakeTimers();
    reads = 0;
    status = STATUS;
    feed = new StatusFeed(
      async () => {
        reads++;
        return status;
      },
      resolveLogger(false, 'test'),
    );
  });
  afterEach(() => {
    feed.close();
    jest.useRealTimers();
  });

  it(`holds ${MAX_STREAMS_PER_CLIENT} streams per client and ${MAX_STREAMS} in all; a closed one frees its place`, () => {
    const mine = Array.from({ length: MAX_STREAMS_PER_CLIENT }, () => fakeSink());
    expect(mine.map((sink) => open(feed, 'ada 127.0.0.1', sink))).toEqual(mine.map(() => 200));
    expect(open(feed, 'ada 127.0.0.1', fakeSink())).toBe(503);
    expect(open(feed, 'grace 127.0.0.1', fakeSink())).toBe(200);
    mine[0]!.end();
    expect(open(feed, 'ada 127.0.0.1', fakeSink())).toBe(200);
    const others = Array.from({ length: MAX_STREAMS }, (_, i) => open(feed, `client ${i}`, fakeSink()));
    expect(others.filter((s) => s === 200)).toHaveLength(MAX_STREAMS - MAX_STREAMS_PER_CLIENT - 1);
    expect(others.filter((s) => s === 503)).toHaveLength(MAX_STREAMS_PER_CLIENT + 1);
  });

  it('sends the status on open and on each change only, and reads the inbox only while a page listens', async () => {
    const sink = fakeSink();
    open(feed, 'ada', sink);
    await jest.advanceTimersByTimeAsync(0);
    expect(sink.written).toEqual([`event: status\ndata: ${JSON.stringify(STATUS)}\n\n`]);
    await jest.advanceTimersByTimeAsync(POLL_MS * 3);
    expect(sink.written).toHaveLength(1);
    status = { ...STATUS, dead: 3 };
    await jest.advanceTimersByTimeAsync(POLL_MS);
    expect(sink.written.at(-1)).toContain('"dead":3');
    const late = fakeSink();
    open(feed, 'grace', late);
    expect(late.written).toEqual([sink.written.at(-1)]);
    sink.end();
    late.end();
    const before = reads;
    await jest.advanceTimersByTimeAsync(POLL_MS * 10);
    expect(reads).toBe(before);
  });

  it(`ends a stream whose client leaves more than ${MAX_STREAM_BUFFER} bytes unread, and writes it nothing more`, async () => {
    const slow = fakeSink();
    const quick = fakeSink();
    open(feed, 'ada', slow);
    open(feed, 'grace', quick);
    await jest.advanceTimersByTimeAsync(0);
    slow.backlog = MAX_STREAM_BUFFER + 1;
    status = { ...STATUS, waiting: 9 };
    await jest.advanceTimersByTimeAsync(POLL_MS);
    expect(slow.ended).toBe(true);
    expect(slow.written).toHaveLength(1);
    expect(quick.written).toHaveLength(2);
    // Its place is free again.
    for (let i = 0; i < MAX_STREAMS_PER_CLIENT; i++) expect(open(feed, 'ada', fakeSink())).toBe(200);
  });
});
