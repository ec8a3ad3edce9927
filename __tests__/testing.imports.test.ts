// `import 'service-webhooks'` must not load what only tests need (supertest, used to send), nor the
// optional peers of other subpaths, nor OpenTelemetry before an SDK registers; the test kit builds
// envelopes without the cloudevents SDK.
const HEAVY = [
  'cloudevents',
  '@opentelemetry/api',
  'prom-client',
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

it("import 'service-webhooks' loads neither supertest, the cloudevents SDK, OpenTelemetry nor any optional peer", () => {
  expect(loadedBy('service-webhooks')).toEqual([]);
});

it('the test kit loads none of them either, supertest not until it sends', () => {
  expect(loadedBy('service-webhooks/testing')).toEqual([]);
});

it('service-webhooks/metrics loads its peer, prom-client', () => {
  // The positive case shows the probe sees a load: without it, the tests above could not fail.
  expect(loadedBy('service-webhooks/metrics')).toContain('prom-client');
});
