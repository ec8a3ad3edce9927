/** A mistake in how the command was called: exit code 2, one line that says what to type instead. */
export class UsageError extends Error {
  readonly exitCode = 2;
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The command ran and failed: exit code 1, one line that says what to do. */
export class CliFailure extends Error {
  readonly exitCode = 1;
  constructor(message: string) {
    super(message);
    this.name = 'CliFailure';
  }
}

/** Stopped by Ctrl-C once it had said how far it came: exit code 130 (128 + SIGINT), nothing more printed. */
export class Stopped extends Error {
  readonly exitCode = 130;
  constructor() {
    super('stopped');
    this.name = 'Stopped';
  }
}
