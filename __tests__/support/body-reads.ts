import * as nodeBodyModule from '../../lib/adapters/incoming-message/node-body';

/**
 * Watches how the doors take node:http bodies: `now` counts bodies the core took at once
 * (`readNow`), `read` the reads it had to wait for. `restore` puts nodeBody back.
 */
export function watchBodyReads() {
  const taken = { now: 0, read: 0 };
  const original = nodeBodyModule.nodeBody;
  const spy = jest.spyOn(nodeBodyModule, 'nodeBody').mockImplementation((stream, parsed) => {
    const body = original(stream, parsed);
    const readNow = body.readNow?.bind(body);
    return {
      parsed: body.parsed,
      hasBody: body.hasBody,
      readNow:
        readNow &&
        ((limit: number) => {
          const bytes = readNow(limit);
          if (bytes !== undefined) taken.now++;
          return bytes;
        }),
      read: (limit: number, timeoutMs: number) => {
        taken.read++;
        return body.read(limit, timeoutMs);
      },
    };
  });
  return { taken, restore: () => spy.mockRestore() };
}
