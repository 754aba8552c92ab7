import type { StepSummary } from '@goalkeeper/agent-loop'
import { NewResults } from '@goalkeeper/policy'
import { failureOf } from './classify.ts'
import type { MistakeLimitConfig } from './config.ts'
import type { MistakeFailure } from './types.ts'

const KEPT_FAILURES = 10

/**
 * The failures of a turn since its last success that changed anything: a successful write, or a result (not
 * empty) whose fingerprint the goal had not seen. Successes that change nothing (the same listing again, a
 * search that finds nothing) do not end the run, so a model alternating a failing call with an idle one is
 * counted, while one that explores and finds something starts over. The limit needs an idle success between
 * the failures (failures alone are the consecutive limit's) and is judged on a failure, so a model that tries
 * three names, lists the directory again and then reads the right file is not stopped.
 */
export class StaleFailures {
  turn: number | undefined
  /** Counted failures (the model's mistakes; timeouts and infrastructure codes are not counted) and all calls of the run. */
  count = 0
  calls = 0
  /** Successes since the run's first failure (they changed nothing): without one, failures in a row are the consecutive limit's. */
  idle = 0
  failures: MistakeFailure[] = []
  private results: NewResults
  private writes: (tool: string) => boolean

  /** `writes`: whether a successful call of this tool changes the workspace. */
  constructor(private config: MistakeLimitConfig, writes: (tool: string) => boolean) {
    this.writes = writes
    this.results = new NewResults(config)
  }

  /** Starts over, forgetting the results seen: the goal (or the streak that led to a decision) is over. */
  reset(): void {
    this.restart()
    this.results.clear()
  }

  /** Feeds one step; returns whether a failure of this step brought the count to `staleFailures`. */
  observe(summary: StepSummary): boolean {
    if (this.turn !== summary.turn) {
      this.restart()
      this.turn = summary.turn
    }
    let failed = false
    for (const call of summary.toolCalls) {
      if (call.error?.code === 'ABORTED') continue
      if (call.ok) {
        if (this.writes(call.name) || this.results.add(call)) {
          this.restart()
        } else {
          this.calls++
          // Idle successes before the first failure say nothing about failing: reading six files with the
          // same contents, then guessing three names, is exploring.
          if (this.count) this.idle++
        }
        continue
      }
      const counted = failureOf(call, summary.step, this.config)
      this.calls++
      if (counted?.kind !== 'mistake') continue
      failed = true
      this.count++
      this.failures = [...this.failures, counted.failure].slice(-KEPT_FAILURES)
    }
    return failed && this.config.staleFailures > 0 && this.idle > 0 && this.count >= this.config.staleFailures
  }

  private restart(): void {
    this.count = 0
    this.calls = 0
    this.idle = 0
    this.failures = []
  }
}
