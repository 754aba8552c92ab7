/** Record types the fleet writes into a goal's session (DESIGN.md, the fleet section). */
export interface FleetRecordData {
  /** A worker opened the session for a job: every run of the job starts with one. */
  'fleet/claim': {
    worker: string
    job: string
    /** pg-boss's retry count of the job at this run (0: first run). */
    attempt: number
    /** The session existed: another worker ran the goal before (and died or drained). */
    takeover: boolean
    /** The goal loaded disarmed and this worker re-armed it, the job being a standing instruction. */
    rearmed: boolean
    /** The goal's phase as it was loaded (undefined for a new session). */
    phase?: string
    /** The commit the workspace starts from: the job's ref for a new session, else the last commit the session recorded. */
    commit?: string
  }
  /** A round's workspace changes were committed and pushed. */
  'fleet/push': { worker: string; branch: string; commit: string; round: number }
  /**
   * A worker taking the goal over found turns the branch does not hold (their worker stopped before it
   * recorded their push): the workspace and the branch were reset to `commit`, the last one the session
   * recorded (pushed after round `round`), and those turns no longer count as done.
   */
  'fleet/rewind': {
    worker: string
    commit: string
    round: number
    /** Turns started after `commit` was recorded: what they changed in the workspace is gone. */
    lostTurns: number[]
    /** The goal rounds among them. */
    lostRounds: number[]
    /** The branch head that was dropped, when a push landed that the session never recorded. */
    dropped?: string
  }
  /** A draining worker paused the goal and gave the job back to the queue. */
  'fleet/release': { worker: string; job: string; phase: string; rounds: number }
}

declare module '@goalkeeper/session' {
  interface RecordData extends FleetRecordData {}
}

export const FLEET_RECORD_TYPES = ['fleet/claim', 'fleet/push', 'fleet/rewind', 'fleet/release'] as const
