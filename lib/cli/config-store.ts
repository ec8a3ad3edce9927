import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliFailure } from './cli-errors';

/**
 * The user's config directory for this tool, as each platform places it; `SERVICE_WEBHOOKS_CONFIG_DIR`
 * overrides it. An empty or relative `XDG_CONFIG_HOME` is ignored, as the XDG Base Directory spec
 * says: taken as a path, it would put the token in the working directory (a git checkout).
 */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.SERVICE_WEBHOOKS_CONFIG_DIR;
  if (override) {
    if (!path.isAbsolute(override)) {
      throw new CliFailure(
        `[service-webhooks] SERVICE_WEBHOOKS_CONFIG_DIR must be an absolute path (got ${JSON.stringify(override.slice(0, 100))}); the CLI keeps a token there.`,
      );
    }
    return override;
  }
  const xdg = env.XDG_CONFIG_HOME;
  const base =
    process.platform === 'win32'
      ? (env.APPDATA ?? path.join(os.homedir(), 'AppData', 'Roaming'))
      : process.platform === 'darwin'
        ? path.join(os.homedir(), 'Library', 'Preferences')
        : xdg !== undefined && path.isAbsolute(xdg)
          ? xdg
          : path.join(os.homedir(), '.config');
  return path.join(base, 'service-webhooks');
}

/** What `listen` and `emulator` leave for the next command: the token, and the running emulator. */
export interface CliState {
  /** The delivery token `listen` registers with, stable across restarts. */
  token?: string;
  /** The emulator `listen` or `emulator` last started. */
  emulatorUrl?: string;
  /** The layout `listen --layout` chose; `trigger` uses it unless told otherwise. */
  layout?: 'A' | 'B';
}

const file = (env: NodeJS.ProcessEnv) => path.join(configDir(env), 'state.json');

/** A token as `listen` makes one: visible ASCII, no spaces, nothing a terminal would act on. */
const TOKEN = /^[\x21-\x7e]{1,200}$/;

function validUrl(value: unknown): boolean {
  if (typeof value !== 'string' || !TOKEN.test(value)) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** What is wrong with a parsed state file, or `undefined` when it is one the CLI wrote. */
function stateProblem(state: unknown): string | undefined {
  if (typeof state !== 'object' || state === null || Array.isArray(state)) return 'it is not a JSON object';
  const { token, emulatorUrl, layout } = state as Record<string, unknown>;
  if (token !== undefined && (typeof token !== 'string' || !TOKEN.test(token)))
    return 'its token is not 1 to 200 visible ASCII characters';
  if (emulatorUrl !== undefined && !validUrl(emulatorUrl)) return 'its emulatorUrl is not an http(s) URL';
  if (layout !== undefined && layout !== 'A' && layout !== 'B') return 'its layout is not "A" or "B"';
  return undefined;
}

/**
 * The state the CLI kept, checked before any of it is used: a file edited by hand or by another
 * program is refused with what to do, never trusted (its token would be printed, its URL dialled).
 */
export function readState(env: NodeJS.ProcessEnv = process.env): CliState {
  const where = file(env);
  let text: string;
  try {
    text = fs.readFileSync(where, 'utf8');
  } catch {
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const problem = parsed === undefined ? 'it is not JSON' : stateProblem(parsed);
  if (problem !== undefined) {
    throw new CliFailure(
      `[service-webhooks] ${where} is not a state file this CLI wrote (${problem}); delete it and run the command again.`,
    );
  }
  const { token, emulatorUrl, layout } = parsed as CliState;
  return { token, emulatorUrl, layout };
}

/**
 * Keeps the directory private: created 0700, and tightened to 0700 when it already existed wider
 * (a directory the user made with the default umask). A shared directory (sticky, like /tmp) or one
 * owned by someone else is left alone; the state file itself is always 0600.
 */
function privateDir(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const stat = fs.statSync(dir);
  const ours = typeof process.getuid !== 'function' || stat.uid === process.getuid();
  if (ours && (stat.mode & 0o077) !== 0 && (stat.mode & 0o1000) === 0) fs.chmodSync(dir, 0o700);
}

/** Merges `change` into the state; the file is readable by its owner only, as it holds a token. */
export function writeState(change: CliState, env: NodeJS.ProcessEnv = process.env): CliState {
  const next = { ...readState(env), ...change };
  for (const key of Object.keys(next) as (keyof CliState)[]) if (next[key] === undefined) delete next[key];
  privateDir(configDir(env));
  const temporary = `${file(env)}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temporary, file(env));
  return next;
}

/** The token `listen` uses: the one kept from before, or a new one kept for next time. */
export function stableToken(env: NodeJS.ProcessEnv = process.env): string {
  const kept = readState(env).token;
  if (kept !== undefined) return kept;
  return writeState({ token: `whsk_local_${randomBytes(18).toString('base64url')}` }, env).token as string;
}
