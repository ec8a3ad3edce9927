#!/usr/bin/env node
import { exitOnClosedPipe } from './exit-on-closed-pipe';
import { main } from './program';

exitOnClosedPipe(process.stdout);
exitOnClosedPipe(process.stderr);
void main();
