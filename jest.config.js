/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // pg-boss 12 and its ES-module-only dependencies, compiled to CommonJS for jest's loader.
    '/node_modules/(pg-boss|serialize-error|non-error|rrule-temporal)/.+\\.js$':
      '<rootDir>/__tests__/support/esm-to-cjs.js',
  },
  transformIgnorePatterns: ['/node_modules/(?!(pg-boss|serialize-error|non-error|rrule-temporal)/)'],
  testTimeout: 20000,
  // Tests import the package by its name, as a user's tests do.
  moduleNameMapper: {
    '^service-webhooks$': '<rootDir>/lib/index.ts',
    '^service-webhooks/(testing|emulator|console|redis|postgres|metrics|bullmq|pg-boss)$':
      '<rootDir>/lib/$1/index.ts',
    '^service-webhooks/fastify$': '<rootDir>/lib/fastify/index.ts',
  },
};
