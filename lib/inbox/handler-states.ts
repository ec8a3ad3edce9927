/** One handler's state for one queued event, kept with its job and shown on its dead letter. */
export interface HandlerState {
  /** Its success was recorded: a plain replay does not run it again. */
  ok: boolean;
  /** How many tries of the job ran it, across replays (a try whose worker died before saying so is not counted). */
  attempts: number;
  /** The message of its last failure; absent once it succeeded. */
  lastError?: string;
}

/** Each handler's state by its name. */
export type HandlerStates = Record<string, HandlerState>;

/**
 * What a job carries between its tries about the event's handlers, in its data (written through the
 * engine's API: BullMQ's `job.updateData`, pg-boss's `update`).
 */
export interface JobHandlers {
  /** Each handler's state after the job's earlier tries. */
  handlers?: HandlerStates;
  /** Set by a replay naming handlers: only these run, even one whose success was recorded before. */
  runOnly?: readonly string[];
}

function isHandlerState(value: unknown): value is HandlerState {
  if (typeof value !== 'object' || value === null) return false;
  const s = value as Record<string, unknown>;
  return (
    typeof s.ok === 'boolean' &&
    typeof s.attempts === 'number' &&
    Number.isSafeInteger(s.attempts) &&
    s.attempts >= 0 &&
    (s.lastError === undefined || typeof s.lastError === 'string')
  );
}

/** The handler states a job's data holds, or undefined when it holds none (or not that shape). */
export function handlerStatesOf(value: unknown): HandlerStates | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const states: HandlerStates = {};
  for (const [name, state] of Object.entries(value)) if (isHandlerState(state)) states[name] = state;
  return states;
}

/** What a job's data says of its handlers: anything malformed (a queue holds what anyone put) is left out. */
export function jobHandlersOf(data: unknown): JobHandlers {
  if (typeof data !== 'object' || data === null) return {};
  const { handlers, runOnly } = data as { handlers?: unknown; runOnly?: unknown };
  const states = handlerStatesOf(handlers);
  const only =
    Array.isArray(runOnly) && runOnly.every((n) => typeof n === 'string') ? (runOnly as string[]) : undefined;
  return {
    ...(states === undefined ? {} : { handlers: states }),
    ...(only === undefined ? {} : { runOnly: only }),
  };
}

/** The job's data without what it carries about its handlers: the queued delivery itself. */
export function withoutHandlers<T extends object>(data: T): T {
  if (!('handlers' in data) && !('runOnly' in data)) return data;
  const { handlers: _states, runOnly: _only, ...rest } = data as T & JobHandlers;
  return rest as T;
}

/**
 * The states a replay naming `names` starts the job with: those handlers not yet done (so they run,
 * and a retry of the replayed job skips one that succeeded in it), the others as they were.
 */
export function replayStates(states: HandlerStates | undefined, names: readonly string[]): HandlerStates {
  const next: HandlerStates = { ...states };
  for (const name of names) next[name] = { ok: false, attempts: states?.[name]?.attempts ?? 0 };
  return next;
}
