/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__tests__'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testTimeout: 20000,
  // Tests import the package by its name, as a user's tests do.
  moduleNameMapper: {
    '^service-webhooks$': '<rootDir>/lib/index.ts',
    '^service-webhooks/(testing|emulator|console|redis|postgres|metrics)$': '<rootDir>/lib/$1/index.ts',
  },
};
