#!/usr/bin/env node
import { tuneHeap } from '../engine/heap.js';
import { runMain } from './_app.js';
import { stdoutFailed, watchStdio } from './_io.js';

tuneHeap();
watchStdio();
const code = await runMain(process.argv.slice(2));
process.exitCode = code === 0 && stdoutFailed() ? 2 : code;
