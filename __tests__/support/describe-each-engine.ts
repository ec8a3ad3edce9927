import { ENGINES, type EngineServer, type InboxEngine } from './inbox-engines';

/**
 * Starts `engine`'s server before the enclosing `describe`'s tests and closes it after them (its
 * temp dir removed). The getter fails plainly if the server never started.
 */
export function useEngineServer(engine: InboxEngine): () => EngineServer {
  let server: EngineServer | undefined;
  beforeAll(async () => {
    server = await engine.start();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });
  return () => {
    if (server === undefined) throw new Error(`the ${engine.name} server did not start`);
    return server;
  };
}

/**
 * The one lifecycle of every inbox suite: for each engine a `describe` (`title` may name it as
 * `$name`) that skips without the engine's server (fails with `CI=true`), and runs `body` with the
 * server started for it.
 */
export function describeEachEngine(
  title: string,
  body: (engine: InboxEngine, server: () => EngineServer) => void,
  engines: readonly InboxEngine[] = ENGINES,
): void {
  describe.each(engines)(title, (engine) => {
    engine.describeWith(engine.name, () => body(engine, useEngineServer(engine)));
  });
}
