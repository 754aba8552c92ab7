import type { Context } from 'cordis'
import type { Agent, StepSummary } from '@goalkeeper/agent-loop'
import { resetOnRearm } from './reset.ts'

export interface PolicyRuntimeOptions<S> {
  /** A new agent's state, made on its first step. */
  create(agent: Agent): S
  /** Starts the state over (a human re-armed a goal, or a policy acted on a verdict). */
  reset(state: S): void
  /** Each `agent/step-end` of a live agent while the plugin is loaded; the loop awaits it. */
  onStepEnd(agent: Agent, summary: StepSummary, state: S): Promise<void>
  /** More listeners, yielded in the same effect (before the shutdown, so they stay while handlers finish). */
  listeners?(): Iterable<() => unknown>
}

export interface PolicyRuntime<S> {
  /** The agent's state, made on first use. */
  of(agent: Agent): S
  get(agentId: string): S | undefined
  /** Set once the plugin unloads: a handler still running must not act any more. */
  readonly unloading: boolean
  /** Keeps `work` awaited by the unload, so no handler outlives the plugin. */
  track<T>(work: Promise<T>): Promise<T>
}

/**
 * The skeleton every policy plugin shares, as one Cordis effect of `ctx` named `name`: per-agent state made
 * on first use, started over on `resetOnRearm`, dropped on `agent/disposed`; `onStepEnd` on every
 * `agent/step-end`; and an unload that first marks the runtime unloading (a pending verdict wait is
 * abandoned with the plugin), then awaits every tracked handler, then drops all state.
 */
export function policyRuntime<S>(ctx: Context, name: string, options: PolicyRuntimeOptions<S>): PolicyRuntime<S> {
  const states = new Map<string, S>()
  const inflight = new Set<Promise<unknown>>()
  let unloading = false
  const runtime: PolicyRuntime<S> = {
    of(agent) {
      let state = states.get(agent.id)
      if (state === undefined) states.set(agent.id, state = options.create(agent))
      return state
    },
    get: (agentId) => states.get(agentId),
    get unloading() { return unloading },
    track(work) {
      inflight.add(work)
      return work.finally(() => inflight.delete(work))
    },
  }
  ctx.effect(function* () {
    yield ctx.on('agent/step-end', (agent, _turn, _step, summary) => {
      if (unloading || agent.disposed) return
      return runtime.track(options.onStepEnd(agent, summary, runtime.of(agent)))
    })
    if (options.listeners) yield* options.listeners()
    yield* resetOnRearm(ctx, (agentId) => {
      const state = states.get(agentId)
      if (state !== undefined) options.reset(state)
    })
    yield ctx.on('agent/disposed', (agent) => states.delete(agent.id))
    // Runs first on unload: let running handlers finish, then drop all state.
    yield async () => {
      unloading = true
      await Promise.allSettled([...inflight])
      states.clear()
    }
  }, name)
  return runtime
}
