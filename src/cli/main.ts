#!/usr/bin/env node
import { tuneHeap } from '../engine/heap.js';
import { runMain } from './_app.js';

tuneHeap();
process.exitCode = await runMain(process.argv.slice(2));
