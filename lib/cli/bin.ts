#!/usr/bin/env node
import { main } from './program';

void main();
