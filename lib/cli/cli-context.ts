import type { Output } from './output';

/** What every command gets: where to write, the environment, and a way to wait for Ctrl-C. */
export interface CliContext {
  out: Output;
  env: NodeJS.ProcessEnv;
  /** Resolves on SIGINT or SIGTERM: the long-running commands stop cleanly then. */
  interrupted(): Promise<string>;
}

export function processContext(out: Output): CliContext {
  return {
    out,
    env: process.env,
    interrupted: () =>
      new Promise((resolve) => {
        const stop = (signal: string) => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve(signal);
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      }),
  };
}
