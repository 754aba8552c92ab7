import type { Context, Logger } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import { BLOCK, formatDuration, type GoalChange } from '@goalkeeper/goal'
import { describeError, dispatchIsolated } from '@goalkeeper/kit'
import { turnOutcome, type UserMessage } from '@goalkeeper/session'
import type { AutoResumeNotice, GoalAutoResume, PendingResume } from './types.ts'

export interface AutoResumeConfig {
  enabled: boolean
  defaultWaitMs: number
  marginMs: number
  maxTries: number
  maxWaitMs: number
}

interface Waiting extends PendingResume {
  agent: Agent
  revision: number
  timer: ReturnType<typeof setTimeout>
}

/**
 * Resumes a goal blocked `usage-limited` after the reset the provider announced (`retryAfterMs` of the
 * failed turn, else `defaultWaitMs`) plus a margin, at most `maxTries` times per goal. Everything is in
 * memory: a restart leaves the goal blocked, never silently armed.
 */
export class AutoResumer implements GoalAutoResume {
  private readonly waiting = new Map<string, Waiting>()
  private readonly enabledFor = new Set<string>()
  /** Resumes done per goal id, in this process. */
  private readonly tries = new Map<string, number>()
  private readonly logger: Logger

  constructor(private readonly ctx: Context, private readonly config: AutoResumeConfig) {
    this.logger = ctx.logger('goal-auto-resume')
  }

  enable(agent: { id: string }): void {
    this.enabledFor.add(agent.id)
  }

  pending(agent: { id: string }): PendingResume | undefined {
    const waiting = this.waiting.get(agent?.id)
    return waiting && { goalId: waiting.goalId, at: waiting.at, attempt: waiting.attempt, maxTries: waiting.maxTries }
  }

  cancel(agent: { id: string }, why: string): void {
    const waiting = this.waiting.get(agent?.id)
    if (!waiting) return
    clearTimeout(waiting.timer)
    this.waiting.delete(agent.id)
    this.notify(waiting.agent, { kind: 'cancelled', goalId: waiting.goalId, why })
  }

  onGoalChanged(agent: Agent, change: GoalChange): void {
    // Any other change of the goal (a person's edit, pause, clear, resume) takes over from the wait.
    this.cancel(agent, `the goal changed (${change.op})`)
    const goal = change.goal
    if (change.op !== 'block' || goal?.blockedReason?.code !== BLOCK.usageLimited) return
    if (!this.config.enabled && !this.enabledFor.has(agent.id)) return
    const done = this.tries.get(goal.id) ?? 0
    if (done >= this.config.maxTries) {
      return this.notify(agent, { kind: 'declined', goalId: goal.id, why: `it was resumed ${done} times already (maxTries ${this.config.maxTries})` })
    }
    const outcome = turnOutcome(agent.session.records)
    const announced = outcome?.kind === 'error' && typeof outcome.retryAfterMs === 'number' && outcome.retryAfterMs >= 0 ? outcome.retryAfterMs : undefined
    const resetMs = announced ?? this.config.defaultWaitMs
    const waitMs = resetMs + this.config.marginMs
    if (waitMs > this.config.maxWaitMs) {
      return this.notify(agent, { kind: 'declined', goalId: goal.id, why: `the limit resets in ${formatDuration(resetMs)}${announced === undefined ? '' : ' (as the provider announced)'}, beyond the longest wait of ${formatDuration(this.config.maxWaitMs)}` })
    }
    const at = Date.now() + waitMs
    const timer = setTimeout(() => this.fire(agent.id), waitMs)
    // A host that has nothing else to do may exit; it decides whether to wait (the CLI does).
    timer.unref?.()
    this.waiting.set(agent.id, { agent, goalId: goal.id, revision: goal.revision, at, attempt: done + 1, maxTries: this.config.maxTries, timer })
    this.notify(agent, { kind: 'scheduled', goalId: goal.id, at, waitMs, attempt: done + 1, maxTries: this.config.maxTries })
  }

  /** Human input cancels; goal rounds and plugin messages do not. */
  onQueued(agent: Agent, message: UserMessage): void {
    if (message?.source?.kind === 'human') this.cancel(agent, 'human input')
  }

  forget(agent: { id: string }): void {
    this.cancel(agent, 'the agent went away')
    this.enabledFor.delete(agent.id)
  }

  dispose(): void {
    for (const waiting of [...this.waiting.values()]) this.cancel(waiting.agent, 'auto-resume was unloaded')
  }

  private fire(agentId: string): void {
    const waiting = this.waiting.get(agentId)
    if (!waiting) return
    this.waiting.delete(agentId)
    const { agent, goalId, revision, attempt } = waiting
    this.tries.set(goalId, attempt)
    try {
      // The fence: the goal must still be the one that was blocked, at the same revision.
      this.ctx.goals.resume(agent, { id: goalId, revision })
      this.notify(agent, { kind: 'resumed', goalId, attempt })
    } catch (error) {
      this.logger.warn('agent %s: resuming goal %s failed: %s', agent.id, goalId, describeError(error))
      this.notify(agent, { kind: 'cancelled', goalId, why: `the resume failed: ${describeError(error)}` })
    }
  }

  private notify(agent: Agent, notice: AutoResumeNotice): void {
    this.logger.info('agent %s: %s', agent.id, JSON.stringify(notice))
    dispatchIsolated(this.ctx, 'goal/auto-resume', agent, notice)
  }
}
