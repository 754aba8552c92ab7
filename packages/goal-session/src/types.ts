import type { GoalRound, GoalState } from '@goalkeeper/goal'
import type { RoundState } from './round.ts'

/** The round a driver holds for an agent, and where it is in its life (see `RoundState`). */
export interface DriverRound extends GoalRound {
  state: RoundState['kind']
}

/**
 * `ctx.goalDriver`, provided while a round driver is loaded: a host asks for the service to learn whether
 * anything will run a goal's rounds, instead of looking for a plugin by name.
 */
export interface GoalDriver {
  /** The goal round the driver holds for `agent` (reserved, under admission or running); undefined when none. */
  current(agent: { readonly id: string }): DriverRound | undefined
  /**
   * Resolves once `agent` has no goal round queued or running and will start none: its goal is absent or not
   * runnable (`isRunnable`), and the agent is idle with nothing queued. Also resolves when the agent is gone
   * (with undefined) or the driver unloads. The value is the goal at that moment. Hosts wait with this for a
   * goal's rounds to stop, instead of watching events themselves.
   */
  whenSettled(agent: { readonly id: string }): Promise<GoalState | undefined>
}

declare module 'cordis' {
  interface Context {
    goalDriver: GoalDriver
  }
}
