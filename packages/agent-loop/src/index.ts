import type { Context } from 'cordis'
import { AgentRegistry } from './registry.ts'
import type { Config as AgentLoopConfig } from './config.ts'

export * from './types.ts'
export { Config } from './config.ts'
export { DEFAULT_SYSTEM_PROMPT } from './prompt.ts'
export { COMPACTION_INSTRUCTION, SUMMARY_HEADING } from './compaction.ts'
// The line lives with the record it describes, so front ends can show it without loading the loop.
export { compactionLine } from '@goalkeeper/session'
export { ELIDED_OUTPUT, replayHistory } from './history.ts'
export { estimateRequest, CHARS_PER_TOKEN } from './estimate.ts'
export { AgentLoopError, type AgentLoopErrorCode } from './errors.ts'

export const name = 'agent-loop'
export const inject = ['sessions', 'models', 'tools']

export const apply = (ctx: Context, config: AgentLoopConfig) => {
  const registry = new AgentRegistry({
    ctx,
    config,
    sessions: ctx.sessions,
    models: ctx.models,
    tools: ctx.tools,
    logger: ctx.logger('agent-loop'),
  })
  ctx.effect(function* () {
    // Teardown runs in reverse: first `agents` is withdrawn (its dependents unload while agents still work),
    // then every agent ends its turn `disposed` and goes quiet before the plugin is gone.
    yield async () => { await registry.close() }
    yield ctx.sessions.provideCheckpoint(name, (session) => registry.checkpointPart(session.id))
    yield ctx.provide('agents', registry)
  }, 'agent-loop')
}
