#!/usr/bin/env node
import { runMain } from './_app.js';

process.exitCode = await runMain(process.argv.slice(2));
