// `import 'service-webhooks'` must not load what only tests need: the cloudevents SDK (used by the test
// kit to build envelopes) and supertest (used to send them), nor the optional peers of other subpaths.
const HEAVY = [
  'cloudevents',
  'supertest',
  'express',
  '@peculiar/x509',
  'reflect-metadata',
  'pg',
  'redis',
  'ioredis',
];

/** The packages from HEAVY that requiring `entry` loads, seen by replacing each with a recording stub. */
function loadedBy(entry: string): string[] {
  const loaded: string[] = [];
  jest.isolateModules(() => {
    for (const name of HEAVY) {
      jest.doMock(name, () => {
        loaded.push(name);
        return jest.requireActual(name);
      });
    }
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the load itself is under test
    require(entry);
  });
  for (const name of HEAVY) jest.dontMock(name);
  return [...new Set(loaded)];
}

it("import 'service-webhooks' loads neither the cloudevents SDK nor supertest nor any optional peer", () => {
  expect(loadedBy('service-webhooks')).toEqual([]);
});

it('the test kit loads the cloudevents SDK, but not supertest until it sends', () => {
  // The positive case shows the probe sees a load: without it, the test above could not fail.
  expect(loadedBy('service-webhooks/testing')).toEqual(['cloudevents']);
});
