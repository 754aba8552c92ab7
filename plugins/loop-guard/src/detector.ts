import type { ToolCallSummary } from '@goalkeeper/agent-loop'
import type { LoopGuardConfig } from './config.ts'
import type { LoopCall, LoopFinding, LoopKind } from './types.ts'
import { canonicalArguments, digest, wildcard } from './signature.ts'

interface Streak { sig: string; result: string; count: number; sameResult: boolean; call: LoopCall }
interface HistoryEntry { key: string; call: LoopCall }

// Same-error entries are keyed by call signature; past this many the oldest is forgotten.
const MAX_FAILURE_ENTRIES = 256
// When two findings share a level, the more specific one explains the situation better.
const PRIORITY: Record<LoopKind, number> = { 'same-error': 3, poll: 2, repeat: 2, cycle: 1 }

/** Per-agent loop state: fed one step's tool calls at a time, answers with the most severe finding. */
export class LoopDetector {
  private streak: Streak | undefined
  private failures = new Map<string, { error: string; count: number }>()
  private history: HistoryEntry[] = []
  /** Per period p: how many trailing history entries equal the entry p places earlier. */
  private periodic: number[] = []
  private excluded: (name: string) => boolean
  private polled: (name: string) => boolean

  constructor(private config: LoopGuardConfig) {
    this.excluded = wildcard(config.exclude)
    this.polled = wildcard(config.poll)
  }

  reset(): void {
    this.streak = undefined
    this.failures.clear()
    this.history = []
    this.periodic = []
  }

  observe(calls: readonly ToolCallSummary[]): LoopFinding | undefined {
    let worst: LoopFinding | undefined
    for (const call of calls) {
      for (const finding of this.observeCall(call)) {
        if (!worst || rank(finding) >= rank(worst)) worst = finding
      }
    }
    return worst
  }

  private observeCall(summary: ToolCallSummary): LoopFinding[] {
    // An aborted call says nothing about the model's behaviour: the turn was being stopped.
    if (this.excluded(summary.name) || summary.error?.code === 'ABORTED') return []
    const args = canonicalArguments(summary.arguments, this.config)
    const call: LoopCall = { name: summary.name, arguments: args.text, json: args.form !== 'invalid' }
    const sig = digest(`${call.name}\u0000${args.form}\u0000${args.text}`)
    const result = summary.ok
      ? `ok:${digest(summary.content)}`
      : `error:${digest(`${summary.error?.code}\u0000${summary.error?.message}\u0000${summary.content}`)}`
    const poll = this.polled(summary.name)
    const findings: LoopFinding[] = []
    const push = (kind: LoopKind, count: number, calls: LoopCall[], extra: Partial<LoopFinding> = {}) => {
      const level = this.level(count)
      if (level) findings.push({ kind, level, count, calls, sameResult: false, ...extra })
    }

    const streak = this.streak
    // For a poll tool a changed successful result is progress; a failure never is, whatever its text.
    if (streak?.sig === sig && !(poll && summary.ok && result !== streak.result)) {
      streak.count++
      streak.sameResult &&= result === streak.result
      streak.result = result
    } else {
      this.streak = { sig, result, count: 1, sameResult: true, call }
    }
    const current = this.streak!
    if (current.count > 1) push(poll ? 'poll' : 'repeat', current.count, [call], { sameResult: current.sameResult })

    if (summary.ok) {
      this.failures.delete(sig)
    } else {
      const seen = this.failures.get(sig)
      const entry = seen?.error === result ? { error: result, count: seen.count + 1 } : { error: result, count: 1 }
      this.failures.delete(sig)
      this.failures.set(sig, entry)
      if (this.failures.size > MAX_FAILURE_ENTRIES) this.failures.delete(this.failures.keys().next().value!)
      if (entry.count > 1) push('same-error', entry.count, [call], { error: summary.error })
    }

    const cycle = this.observeCycle({ key: poll ? `${sig}#${summary.ok ? result : 'failed'}` : sig, call })
    if (cycle) push('cycle', cycle.repetitions, cycle.calls)
    return findings
  }

  /**
   * Counts full repetitions of a non-constant trailing block of length 2..maxCyclePeriod. The shortest
   * period wins: A-B repeated 4 times also matches period 4 twice, which would undercount it.
   */
  private observeCycle(entry: HistoryEntry): { repetitions: number; calls: LoopCall[] } | undefined {
    const max = this.config.maxCyclePeriod
    for (let period = 2; period <= max; period++) {
      const earlier = this.history[this.history.length - period]
      this.periodic[period] = earlier?.key === entry.key ? (this.periodic[period] ?? 0) + 1 : 0
    }
    this.history.push(entry)
    if (this.history.length > max) this.history.shift()
    for (let period = 2; period <= max; period++) {
      const run = this.periodic[period]
      if (!run || run % period !== 0) continue
      const block = this.history.slice(-period)
      if (block.every((e) => e.key === block[0].key)) continue
      return { repetitions: run / period + 1, calls: block.map((e) => e.call) }
    }
  }

  private level(count: number): LoopFinding['level'] | undefined {
    const { softThreshold, hardThreshold } = this.config
    if (hardThreshold && count >= hardThreshold) return 'hard'
    if (count >= softThreshold && count % softThreshold === 0) return 'soft'
  }
}

function rank(finding: LoopFinding): number {
  return (finding.level === 'hard' ? 10 : 0) + PRIORITY[finding.kind]
}
