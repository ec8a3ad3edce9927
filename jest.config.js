/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    // pg-boss 12, NestJS 12 and their ES-module-only dependencies, compiled to CommonJS for jest's loader.
    '/node_modules/(pg-boss|serialize-error|non-error|rrule-temporal|@nestjs|file-type)/.+\\.js$':
      '<rootDir>/__tests__/support/esm-to-cjs.js',
  },
  transformIgnorePatterns: [
    '/node_modules/(?!(pg-boss|serialize-error|non-error|rrule-temporal|@nestjs|file-type)/)',
  ],
  testTimeout: 20000,
  // Tests import the package by its name, as a user's tests do.
  moduleNameMapper: {
    '^service-webhooks$': '<rootDir>/lib/index.ts',
    '^service-webhooks/(testing|emulator|console|redis|postgres|metrics|bullmq|pg-boss|nestjs)$':
      '<rootDir>/lib/$1/index.ts',
  },
};
