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
   * Resolves once the agent has no goal round queued or running and will start none: its goal is absent or
   * not runnable (not active and armed), and the agent is idle with nothing queued. Resolves with the goal as
   * it is then (undefined when there is none, or the agent is gone); at once if that already holds, and when
   * the driver unloads (after its unload has ended the round in flight).
   */
  whenSettled(agent: { readonly id: string }): Promise<GoalState | undefined>
}

declare module 'cordis' {
  interface Context {
    /** The round driver, while it is loaded (section 9). */
    goalDriver: GoalDriver
  }
}
