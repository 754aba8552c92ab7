import type { Context } from 'cordis'
import type {} from '@goalkeeper/agent-loop'
import { describeError } from '@goalkeeper/kit'
import { compositionFileOf } from '@goalkeeper/loader'
import type {} from '@goalkeeper/tools'
import { Config, type HooksConfig } from './config.ts'
import { HookListeners } from './listeners.ts'
import { compileHooks, HookRuntime } from './runtime.ts'
import { type Trust, trustOf } from './trust.ts'

export { Config, HookSpec, type HooksConfig, type HookSpecConfig } from './config.ts'
export { EVENT_NAMES, EVENT_SPELLINGS, HOOK_EVENTS, parseEvent, type ClaudeEventName, type HookEvent } from './events.ts'
export { CLAUDE_TOOL_NAMES, compileMatcher, type MatchTarget, type MatcherConfig } from './matcher.ts'
export { readAnswer, type HookAnswer, type HookOutcome } from './answer.ts'
export { runCommand, type ProcessResult, type RunOptions } from './runner.ts'
export { compileHooks, HookRuntime, type Hook, type HookRun, type RunScope } from './runtime.ts'
export { HOOK_RUN_RECORD, type HookRunRecord } from './records.ts'
export { APPROVALS_FILE, approveHooks, hooksDigest, trustOf, type Trust, type TrustState } from './trust.ts'
export { HOOKS_SOURCE } from './listeners.ts'
export { goalEventOf, type GoalEvent } from './goal-event.ts'
export { sampleEvent, type SampleEvent } from './samples.ts'
export { describeHook } from './describe.ts'
export { hookEnv, hookInput, type InputScope } from './payload.ts'

export const name = 'hooks'
// Events only; the services it asks about (agents, tools, goals, permissions) are optional.
export const inject: string[] = []

async function trusted(ctx: Context, config: HooksConfig): Promise<boolean> {
  const file = compositionFileOf(ctx)
  let trust: Trust
  try {
    trust = await trustOf(file, config.hooks)
  } catch (error) {
    ctx.logger.warn('the hooks of %s do not run: their approval could not be checked (%s)', file, describeError(error))
    return false
  }
  if (trust.state !== 'unapproved') return true
  // Skipped, never asked about mid-run: a run may be unattended, and the approval is a decision about a file.
  ctx.logger.warn('the %d hooks of %s are not approved and do not run: review them with `goalkeeper hooks`, then approve them with `goalkeeper hooks approve`', config.hooks.length, file)
  return false
}

export const apply = async (ctx: Context, config: HooksConfig) => {
  if (!config.hooks.length || !(await trusted(ctx, config))) return
  const runtime = new HookRuntime(ctx, compileHooks(config.hooks), config)
  const hooks = new HookListeners(ctx, runtime)
  await ctx.effect(function* () {
    yield ctx.on('agent/created', (agent) => void hooks.track(agent))
    yield ctx.on('agent/session-start', (agent, source) => hooks.sessionStart(agent, source))
    yield ctx.on('agent/prompt-submit', async (agent, submission, next) => {
      const { messages, refused } = await hooks.promptSubmit(agent, submission.messages)
      if (refused && !messages.length) return { kind: 'reject', reason: refused }
      submission.messages = messages
      return next()
    })
    yield ctx.on('agent/turn-start', (agent, _turn, messages) => hooks.turnStart(agent, messages))
    yield ctx.on('tool/before-call', async (review, next) => (await hooks.beforeCall(review)) ?? next())
    yield ctx.on('tool/after-call', (report) => hooks.afterCall(report))
    yield ctx.on('agent/step-end', (agent, turn, step, summary) => hooks.stepEnd(agent, turn, step, summary))
    yield ctx.on('agent/compact', async (agent, proposal, next) => {
      await hooks.beforeCompact(agent, proposal.reason, proposal.turn)
      return next()
    })
    yield ctx.on('permissions/waiting', (request) => hooks.needsInput(request))
    yield ctx.on('goal/changed', (agent, change) => hooks.goalChanged(agent, change))
    yield ctx.on('agent/disposed', (agent) => void hooks.sessionEnd(agent, 'other'))
    // Runs first at unload, while the listeners above are still installed: notifications under way finish
    // (each bounded by its timeout), and every live session gets its session-end.
    yield async () => {
      hooks.active = false
      await runtime.drain()
      await hooks.endAll()
    }
  }, 'hooks')
}
