import { readFileSync, statSync } from 'node:fs';
import { parseScenario } from './parse-scenario';
import type { Scenario } from './scenario';

/** A scenario file larger than this is refused before it is read. */
const SCENARIO_FILE_LIMIT = 64 * 1024 * 1024;

/** Reads and checks a scenario file (see `parseScenario`); every error names the file. */
export function loadScenario(file: string, where: string): Scenario {
  const at = `${where}: ${file}`;
  let text: string;
  try {
    const { size } = statSync(file);
    if (size > SCENARIO_FILE_LIMIT)
      throw new Error(`is ${size} bytes, more than the ${SCENARIO_FILE_LIMIT} a scenario may be`);
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`[service-webhooks] ${at}: cannot read it (${(error as Error).message})`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TypeError(`[service-webhooks] ${at}: is not JSON (${(error as Error).message})`);
  }
  return parseScenario(value, at);
}
