import type { Context } from 'cordis'
import { isRunnable, type GoalState } from '@goalkeeper/goal'

/**
 * The waits behind `ctx.goalDriver.whenSettled`: each resolves once its agent has no goal round queued or
 * running and will start none (its goal is absent or not runnable, and the agent is idle with nothing
 * queued), once the agent is gone, or once the driver unloads and the agent is idle (nothing runs rounds any
 * more; the driver cancels a running one as it goes).
 */
export class SettledWaits {
  private readonly waits = new Map<(force?: boolean) => void, { readonly id: string }>()
  private closed = false

  constructor(private readonly ctx: Context) {}

  /** One effect: the triggers, and on unload every open wait resolved with the goal as it is then. */
  install(): void {
    const waits = this
    const ctx = this.ctx
    // A microtask later, so that the driver's own listeners of the same event have acted.
    const later = () => void queueMicrotask(() => waits.checkAll())
    ctx.effect(function* () {
      // Everything that can move an agent towards (or away from) being settled.
      yield ctx.on('agent/status', later)
      yield ctx.on('agent/queued', later)
      yield ctx.on('agent/disposed', later)
      yield ctx.on('goal/changed', later)
      yield ctx.on('goal/activation', later)
      yield () => waits.close()
    }, 'goal-session settled waits')
  }

  wait(agentRef: { readonly id: string }): Promise<GoalState | undefined> {
    return new Promise((resolve) => {
      const check = (force = false) => {
        if (!this.waits.has(check)) return
        const settled = this.settledGoal(agentRef, force)
        if (!settled) return
        this.waits.delete(check)
        resolve(settled.goal)
      }
      this.waits.set(check, agentRef)
      if (this.closed) void this.afterIdle(check, agentRef)
      else check()
    })
  }

  /** `force`: the driver is gone and the agent went idle, so no round will start whatever the goal says. */
  private settledGoal(agentRef: { readonly id: string }, force: boolean): { goal: GoalState | undefined } | undefined {
    const agent = this.agentOf(agentRef)
    if (!agent || agent.disposed) return { goal: undefined }
    // A goal that cannot be read (a corrupt log) runs no rounds: the driver refuses it.
    const goal = this.ctx.goals.get(agent)
    if (force) return { goal }
    if (agent.status !== 'idle' || agent.queued.length || isRunnable(goal)) return undefined
    return { goal }
  }

  private agentOf(agentRef: { readonly id: string }) {
    try {
      return typeof agentRef?.id === 'string' ? this.ctx.agents.get(agentRef.id) : undefined
    } catch {
      // the agents service may already be gone in a whole-tree shutdown
      return undefined
    }
  }

  /** After the triggers are gone: the agent loop's own idle promise tells when the last round is over. */
  private async afterIdle(check: (force?: boolean) => void, agentRef: { readonly id: string }): Promise<void> {
    const agent = this.agentOf(agentRef)
    if (agent && !agent.disposed) await agent.whenIdle().catch(() => {})
    check(true)
  }

  private checkAll(): void {
    for (const check of [...this.waits.keys()]) check()
  }

  private close(): void {
    this.closed = true
    for (const [check, agentRef] of [...this.waits]) void this.afterIdle(check, agentRef)
  }
}
