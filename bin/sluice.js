#!/usr/bin/env node
// The `sluice` command. Sources and job files are TypeScript; tsx loads them without a build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
// Everything sluice opened is closed by now; a handler that ignored its abort signal may still
// hold a timer. Give log lines a moment to flush, then leave.
setTimeout(() => process.exit(), 2_000).unref();
