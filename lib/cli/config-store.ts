import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The user's config directory for this tool, as each platform places it; `SERVICE_WEBHOOKS_CONFIG_DIR` overrides it. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SERVICE_WEBHOOKS_CONFIG_DIR) return env.SERVICE_WEBHOOKS_CONFIG_DIR;
  const base =
    process.platform === 'win32'
      ? (env.APPDATA ?? path.join(os.homedir(), 'AppData', 'Roaming'))
      : process.platform === 'darwin'
        ? path.join(os.homedir(), 'Library', 'Preferences')
        : (env.XDG_CONFIG_HOME ?? path.join(os.homedir(), '.config'));
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

export function readState(env: NodeJS.ProcessEnv = process.env): CliState {
  try {
    const parsed = JSON.parse(fs.readFileSync(file(env), 'utf8')) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as CliState) : {};
  } catch {
    return {};
  }
}

/** Merges `change` into the state; the file is readable by its owner only, as it holds a token. */
export function writeState(change: CliState, env: NodeJS.ProcessEnv = process.env): CliState {
  const next = { ...readState(env), ...change };
  fs.mkdirSync(configDir(env), { recursive: true, mode: 0o700 });
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
