// Entry point of the `goalkeeper` command (run under tsx: bin/goalkeeper.mjs or `node --import tsx`).
import { exitAfterFlush } from './app.ts'
import { describeError } from '@goalkeeper/kit'
import { runCli } from './program.ts'
import { redact } from './redact.ts'

// Cordis does not isolate async event listeners; a stray rejection must not take down a running agent.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(redact(`goalkeeper: unhandled rejection: ${describeError(reason)}\n`))
})

// A reader that goes away early (`goalkeeper show --json | head -1`) is not the command's failure: what
// it no longer reads is dropped and the command ends as it would have. Later writes fail silently.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
  })
}

await exitAfterFlush(await runCli(process.argv))
