// An example third-party plugin on the tool pipeline's per-call seam (`tool/before-call`, see
// packages/tools/README.md). For `run_command` it refuses commands that match a deny pattern (by default
// `rm -rf` and its spellings) with a reason the model reads, caps `timeout_ms`, and lets everything else through.
// Load it from cordis.yml, below the tools entry:
//
//   - id: command-guard
//     name: ./examples/command-guard.mjs
//     config:
//       maxTimeoutMs: 60000
//
// It is an example of the seam, not a sandbox: a model can delete files in ways no pattern foresees.
import Schema from 'schemastery'

export const name = 'command-guard'
// It talks only through events, so it needs no service.
export const inject = []

export const Config = Schema.object({
  deny: Schema.array(String)
    .default([
      // rm -rf, -fr, -Rf, -rfv ...
      '\\brm\\s+(-\\w+\\s+)*-\\w*(r\\w*f|f\\w*r)',
      // rm -r -f, rm -f -v -r ...
      '\\brm\\s+(-\\w+\\s+)*(-\\w*r\\w*\\s+(-\\w+\\s+)*-\\w*f|-\\w*f\\w*\\s+(-\\w+\\s+)*-\\w*r)',
    ])
    .description('Regular expressions (case-insensitive); a run_command whose command matches one is refused.'),
  maxTimeoutMs: Schema.natural().min(1).default(60_000)
    .description('A larger timeout_ms is lowered to this.'),
})

export const apply = (ctx, config) => {
  // A bad pattern fails the plugin's load, with the loader naming this entry.
  const patterns = config.deny.map((source) => new RegExp(source, 'i'))
  ctx.on('tool/before-call', async (review, next) => {
    if (review.name !== 'run_command') return next()
    const { command, timeout_ms: timeout } = review.arguments
    const match = patterns.find((pattern) => pattern.test(command))
    if (match) {
      // Not calling next(): the call is refused here, and the model reads this reason as the tool's error.
      return { kind: 'deny', by: name, reason: `recursive forced deletes are not allowed here (the command matches /${match.source}/i). Delete the files you mean by name, or ask the user.` }
    }
    if (timeout !== undefined && timeout > config.maxTimeoutMs) {
      // Rewrites go before next(): the listeners inside see, and the tool runs with, the new arguments.
      review.rewrite({ ...review.arguments, timeout_ms: config.maxTimeoutMs }, name, `timeout_ms is capped at ${config.maxTimeoutMs}`)
    }
    return next()
  })
}
