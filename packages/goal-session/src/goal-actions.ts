import type { Context, Logger } from 'cordis'
import type { BlockedReason, GoalRef } from '@goalkeeper/goal'
import { describeError } from '@goalkeeper/kit'

interface AgentLike { readonly id: string }

/**
 * The driver's goal mutations, each contained: a failure is logged and falls back to `disarm`, so a
 * goal is never left armed after the driver decided automatic work must stop.
 */
export class GoalActions {
  constructor(private goals: Context['goals'], private logger: Logger) {}

  block(agent: AgentLike, ref: GoalRef, reason: BlockedReason): void {
    try {
      this.goals.block(agent, ref, reason)
      this.logger.info('goal %s of agent %s blocked: %s', ref.id, agent.id, reason.code)
    } catch (error) {
      this.logger.error('blocking goal %s of agent %s (%s) failed: %s', ref.id, agent.id, reason.code, describeError(error, { stack: true }))
      this.disarm(agent, `block ${reason.code} failed`)
    }
  }

  pause(agent: AgentLike, ref: GoalRef, why: string): void {
    try {
      this.goals.pause(agent, ref)
      this.logger.info('goal %s of agent %s paused: %s', ref.id, agent.id, why)
    } catch (error) {
      this.logger.error('pausing goal %s of agent %s failed: %s', ref.id, agent.id, describeError(error, { stack: true }))
      this.disarm(agent, 'pause failed')
    }
  }

  /** Drops automatic authority if the goal holds it; never throws. A corrupt goal log is reported, not read as "no goal". */
  disarm(agent: AgentLike, why: string): void {
    const health = this.goals.health(agent)
    if (!health.ok) return void this.logger.error('disarming the goal of agent %s (%s) failed: %s', agent.id, why, health.error.message)
    const goal = this.goals.get(agent)
    if (goal?.activation !== 'armed') return
    this.goals.disarm(agent)
    this.logger.info('goal %s of agent %s disarmed: %s', goal.id, agent.id, why)
  }
}
