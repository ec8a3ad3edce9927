/**
 * Two projects: `suite` (`npm test`: the unit and contract tests, a few minutes on 2 cores) and
 * `proofs` (`npm run test:proofs`: the `*.proof.test.ts` files, the long proofs: chaos, kills, soaks,
 * many processes, the packed tarball, Bun and Deno). `npx jest <file>` runs any one file of either.
 */
const shared = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // pg-boss 12, NestJS 12 and their ES-module-only dependencies, compiled to CommonJS for jest's loader.
    '/node_modules/(pg-boss|serialize-error|non-error|rrule-temporal|@nestjs|file-type)/.+\\.js$':
      '<rootDir>/__tests__/support/esm-to-cjs.js',
  },
  transformIgnorePatterns: [
    '/node_modules/(?!(pg-boss|serialize-error|non-error|rrule-temporal|@nestjs|file-type)/)',
  ],
  // Tests import the package by its name, as a user's tests do.
  moduleNameMapper: {
    '^service-webhooks$': '<rootDir>/lib/index.ts',
    '^service-webhooks/(testing|emulator|console|redis|postgres|metrics|bullmq|pg-boss|nestjs|inbox-console)$':
      '<rootDir>/lib/$1/index.ts',
    '^service-webhooks/fastify$': '<rootDir>/lib/fastify/index.ts',
  },
};

/** @type {import('jest').Config} */
module.exports = {
  // Most files wait on servers and child processes rather than compute (two workers kept two cores
  // about half busy), so three workers on two cores finish sooner than jest's default of one: 4 min
  // 20 s for npm test on a clean clone against 5 min 27 s with two. `npm run test:proofs` runs its
  // files one at a time.
  maxWorkers: 3,
  // A bound on a hung test, not a speed goal: a busy machine takes several times as long as an idle
  // one, and slower setups (servers, builds) carry bounds of their own. Jest reads it here, not in a
  // project (a project's own testTimeout is ignored: its tests got jest's 5 s).
  testTimeout: 60_000,
  projects: [
    {
      ...shared,
      displayName: 'suite',
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['\\.proof\\.test\\.ts$'],
    },
    { ...shared, displayName: 'proofs', testMatch: ['**/*.proof.test.ts'] },
  ],
};
