#!/usr/bin/env node
import { exitOnClosedPipe } from './exit-on-closed-pipe';
import { main } from './program';

exitOnClosedPipe(process.stdout);
exitOnClosedPipe(process.stderr);
void main();

// An ES module by this export: a file without one esbuild bundles as CommonJS, wrapping every module it
// reaches in a lazy initialiser, the receiver's shared with the main entry included (tsup.config.ts).
export {};
