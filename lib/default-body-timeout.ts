/**
 * How long a request body may take to arrive: the receiver's `bodyTimeoutMs` default, and the
 * emulator's one bound. Node's own (`requestTimeout`, 300 s) would let a client that trickles a byte
 * now and then hold a socket and a buffer for five minutes.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;
