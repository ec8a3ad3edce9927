/**
 * Ends the process quietly once the reader of `stream` has gone (`service-webhooks --help | head -1`),
 * as git and npm do: a closed pipe is the reader's choice, not a failure worth a stack trace. Node
 * ignores SIGPIPE, so the write fails with EPIPE instead, emitted on the stream with no listener.
 * The exit waits for the work already queued (one turn of the event loop), so a code already decided
 * (2 for a usage error whose usage went to the closed pipe) is kept; otherwise 0.
 */
export function exitOnClosedPipe(stream: NodeJS.WritableStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    setImmediate(() => process.exit(process.exitCode ?? 0));
  });
}
