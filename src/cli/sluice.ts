#!/usr/bin/env node
/**
 * The `sluice` executable: bin/sluice.js runs this file compiled (dist/src/cli/sluice.js); the
 * repo's own scripts run it from source (`node --import tsx src/cli/sluice.ts`). Exit codes:
 * 0 success or help, 1 runtime failure, 2 usage error (see main.ts).
 */
import { main } from './main.ts';

process.exitCode = await main(process.argv.slice(2));
// Everything sluice opened is closed by now; a handler that ignored its abort signal may still
// hold a timer. Give log lines a moment to flush, then leave.
setTimeout(() => process.exit(), 2_000).unref();
