// A policy plugin: at most `maxWrites` successful file writes per goal round. The next write of that
// round is denied on the per-call seam (the model reads why), and the goal is blocked with the code
// `write-limit`, so an unattended goal that rewrites files in a loop stops instead of running on.
// Human turns are not limited: only goal rounds are (ctx.goals.roundOf tells them apart).
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { clip } from '@goalkeeper/kit'
import type {} from '@goalkeeper/goal'
import type {} from '@goalkeeper/tools'

export const name = 'write-limit'
export const inject = ['goals']

export interface Config {
  maxWrites: number
  tools: string[]
}

export const Config: Schema<Config> = Schema.object({
  maxWrites: Schema.natural().min(1).default(20).description('Successful writes allowed in one goal round.'),
  tools: Schema.array(String).default(['write_file', 'edit_file']).description('The tools that count as writes.'),
})

export const apply = (ctx: Context, config: Config) => {
  // Per agent: the turn and its writes so far. Owned by this plugin instance: a reload starts from nothing.
  const writes = new Map<string, { turn: number; count: number }>()

  ctx.on('tool/after-call', (report) => {
    if (!config.tools.includes(report.name) || !report.result.ok) return
    const { agent, turn } = report.call
    if (!ctx.goals.roundOf(agent, turn)) return
    const seen = writes.get(agent.id)
    writes.set(agent.id, { turn, count: seen?.turn === turn ? seen.count + 1 : 1 })
  })

  ctx.on('tool/before-call', async (review, next) => {
    const { agent, turn } = review.call
    const seen = writes.get(agent.id)
    if (!config.tools.includes(review.name) || !seen || seen.turn !== turn || seen.count < config.maxWrites) return next()
    const message = `more than ${config.maxWrites} file writes in one goal round (the last one asked for: ${clip(JSON.stringify(review.arguments), 120)})`
    // blockRound writes nothing unless `turn` is still a round of the live goal: a late call is harmless.
    // A block that lands ends the round: later calls of the turn are refused in this plugin's name, and no
    // further model call is made.
    ctx.goals.blockRound(agent, turn, { code: 'write-limit', message }, { by: name })
    return { kind: 'deny', by: name, reason: `${message}; the goal is blocked until a person looks at it.` }
  })

}
