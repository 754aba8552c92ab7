import type { HookOutcome } from './answer.ts'
import type { HookEvent } from './events.ts'

/** Session record of one hook run. */
export const HOOK_RUN_RECORD = 'hook/run'

export interface HookRunRecord {
  event: HookEvent
  /** The hook's `name`, else its command (clipped); secrets masked. */
  hook: string
  /** null when it was killed or never started. */
  exitCode: number | null
  signal?: string
  durationMs: number
  outcome: HookOutcome
  /** What its answer asked for: `block`, `allow`, `deny`, `ask`, `rewrite`, `context`, `stop`. */
  decisions?: string[]
  /** Why it failed; secrets masked. */
  problem?: string
  /** Its output went over `maxOutput` and was cut. */
  outputCut?: true
  turn?: number
  step?: number
  callId?: string
}

declare module '@goalkeeper/session' {
  interface RecordData {
    /** One run of a command hook: its event, exit code, time and what it decided (masked). */
    'hook/run': HookRunRecord
  }
}
