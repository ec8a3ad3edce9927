import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

const EXECUTABLE = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Debian's chromium through playwright-core, in a new empty profile. With CI=true a missing browser
 * fails the suite; elsewhere the suite is skipped with one line saying what to install.
 */
export function chromiumOrSkip(): {
  available: boolean;
  launch(): Promise<{ context: BrowserContext; close(): Promise<void> }>;
} {
  const available = fs.existsSync(EXECUTABLE);
  if (!available) {
    if (process.env.CI === 'true') throw new Error(`[CI] ${EXECUTABLE} is missing: apt-get install chromium`);
    process.stderr.write(
      `skipping browser tests: ${EXECUTABLE} not found; install it with: sudo apt-get install chromium\n`,
    );
  }
  return {
    available,
    async launch() {
      const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'sw-chromium-profile-'));
      const context = await chromium.launchPersistentContext(profile, {
        executablePath: EXECUTABLE,
        headless: true,
        args: FLAGS,
        viewport: { width: 1280, height: 900 },
        timeout: 30_000,
      });
      return {
        context,
        close: async () => {
          await context.close();
          fs.rmSync(profile, { recursive: true, force: true });
        },
      };
    },
  };
}
