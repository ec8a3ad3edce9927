import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { configDir, readState, stableToken, writeState } from '../lib/cli/config-store';

let home: string;
let cwd: string;
const previousCwd = process.cwd();
beforeEach(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'sw-config-store-'));
  cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'sw-config-cwd-'));
  process.chdir(cwd);
  jest.spyOn(os, 'homedir').mockReturnValue(home);
});
afterEach(() => {
  jest.restoreAllMocks();
  process.chdir(previousCwd);
  fs.rmSync(home, { recursive: true, force: true });
  fs.rmSync(cwd, { recursive: true, force: true });
});

describe('configDir', () => {
  it.each([
    ['unset', undefined],
    ['empty', ''],
    ['relative', 'conf'],
    ['relative with a dot', './conf'],
  ])(
    'ignores an XDG_CONFIG_HOME that is %s (XDG spec): ~/.config, never the working directory',
    (_name, xdg) => {
      const dir = configDir({ XDG_CONFIG_HOME: xdg });
      expect(dir).toBe(path.join(home, '.config', 'service-webhooks'));
      stableToken({ XDG_CONFIG_HOME: xdg });
      expect(fs.readdirSync(cwd)).toEqual([]);
    },
  );

  it('takes an absolute XDG_CONFIG_HOME', () => {
    expect(configDir({ XDG_CONFIG_HOME: '/srv/conf' })).toBe('/srv/conf/service-webhooks');
  });

  it('refuses a relative SERVICE_WEBHOOKS_CONFIG_DIR with what to do', () => {
    expect(() => configDir({ SERVICE_WEBHOOKS_CONFIG_DIR: 'state' })).toThrow(/must be an absolute path/);
  });
});

describe('the state file', () => {
  const env = () => ({ SERVICE_WEBHOOKS_CONFIG_DIR: path.join(home, 'sw') });
  const stateFile = () => path.join(home, 'sw', 'state.json');
  const write = (text: string) => {
    fs.mkdirSync(path.join(home, 'sw'), { recursive: true });
    fs.writeFileSync(stateFile(), text);
  };

  it('round-trips what the CLI writes, 0600 in a 0700 directory', () => {
    writeState({ token: 'whsk_local_abc', emulatorUrl: 'http://127.0.0.1:4010', layout: 'B' }, env());
    expect(readState(env())).toEqual({
      token: 'whsk_local_abc',
      emulatorUrl: 'http://127.0.0.1:4010',
      layout: 'B',
    });
    expect(fs.statSync(stateFile()).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(home, 'sw')).mode & 0o777).toBe(0o700);
  });

  it('tightens a config directory that already existed 0755 to 0700', () => {
    fs.mkdirSync(path.join(home, 'sw'), { mode: 0o755 });
    fs.chmodSync(path.join(home, 'sw'), 0o755);
    stableToken(env());
    expect(fs.statSync(path.join(home, 'sw')).mode & 0o777).toBe(0o700);
  });

  it.each([
    ['not JSON', '{"token": '],
    ['not an object', '"whsk"'],
    ['an array', '[]'],
    ['a url that is a number', '{"emulatorUrl": 4010}'],
    ['a url that is not http', '{"emulatorUrl": "file:///etc/passwd"}'],
    ['a token with ANSI escapes', '{"token": "\\u001b[2J\\u001b[31mwhsk"}'],
    ['a token with a newline', '{"token": "whsk\\nerror: forged"}'],
    ['a token that is not a string', '{"token": {"toString": 1}}'],
    ['an unknown layout', '{"layout": "C"}'],
  ])('refuses a state file that is %s, saying what to do, and writes nothing over it', (_name, text) => {
    write(text);
    expect(() => readState(env())).toThrow(/is not a state file this CLI wrote .*delete it/);
    expect(() => stableToken(env())).toThrow(/delete it/);
    expect(fs.readFileSync(stateFile(), 'utf8')).toBe(text);
  });

  it('reads no state when there is no file', () => {
    expect(readState(env())).toEqual({});
  });
});
