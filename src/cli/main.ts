#!/usr/bin/env node
import { setV8Flags } from '../engine/v8-flags.js';
import { internalError, runMain } from './_app.js';
import { abortStagingOnSignals, processIO, stdoutFailed, watchStdio } from './_io.js';

setV8Flags();
watchStdio();
abortStagingOnSignals();
// An error outside a command's own flow (an event handler, a stray promise) is a bug too: one line, not a stack.
const crash = (e: unknown) => process.exit(internalError(e, processIO));
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);
const code = await runMain(process.argv.slice(2));
process.exitCode = code === 0 && stdoutFailed() ? 2 : code;
