// Entry point of the `goalkeeper` command (run under tsx: bin/goalkeeper.mjs or `node --import tsx`).
import { exitAfterFlush } from './app.ts'
import { describeError } from './errors.ts'
import { runCli } from './program.ts'
import { redact } from './redact.ts'

// Cordis does not isolate async event listeners; a stray rejection must not take down a running agent.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(redact(`goalkeeper: unhandled rejection: ${describeError(reason)}\n`))
})

await exitAfterFlush(await runCli(process.argv))
