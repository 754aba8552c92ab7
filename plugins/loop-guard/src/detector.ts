import type { ToolCallSummary } from '@goalkeeper/agent-loop'
import type { ToolErrorInfo } from '@goalkeeper/session'
import { digest, Occurrences, similarity, volatileMasker, wildcard } from '@goalkeeper/policy'
import type { LoopGuardConfig } from './config.ts'
import type { LoopCall, LoopFinding, LoopKind } from './types.ts'
import { canonicalArguments, looseString } from './signature.ts'

/** One observed call, reduced to what comparisons need. */
interface Observed {
  name: string
  /** Digest of the exact canonical arguments. */
  sig: string
  /** Digest of the near-identical form (lone numbers, timestamps, comments, whitespace masked); `sig` when nearIdentical is off. */
  loose: string
  /** The near-identical form itself, for the similarity test (only kept when that test is on). */
  looseText: string
  /** Digest of the result with its volatile parts masked. */
  result: string
  ok: boolean
  call: LoopCall
}

interface Streak {
  last: Observed
  /** Calls in the streak since the result last changed for the better (a changed success is progress). */
  repeats: number
  /** Every call in the streak: bounds polling, where the result keeps changing. */
  polls: number
  sameResult: boolean
  nearIdentical: boolean
}

interface HistoryEntry { key: string; call: LoopCall }

/** The calls in a row since the last one that was new in the goal (its arguments and result never seen before). */
interface StaleRun {
  /** The latest calls counted (made blockRepetition times before), at most BLOCK_CALLS_SHOWN. */
  calls: LoopCall[]
  /** How many calls of the run were counted. */
  count: number
  /** The key of the first counted call, and whether another key was counted since. */
  first?: string
  distinct: boolean
}

/** Same-error entries are keyed by call; past this many calls the oldest is forgotten. */
const MAX_FAILURE_ENTRIES = 256
/** Near-identical forms longer than this are compared only by digest (the similarity test costs length squared). */
const MAX_SIMILAR_CHARS = 4000
/** Calls of a redone block quoted in the messages. */
const BLOCK_CALLS_SHOWN = 6
// When two findings share a level, the more specific one explains the situation better.
const PRIORITY: Record<LoopKind, number> = { 'same-error': 3, poll: 2, repeat: 2, cycle: 1, block: 0 }

/** Per-agent loop state: fed one step's tool calls at a time, answers with the most severe finding. */
export class LoopDetector {
  private streak: Streak | undefined
  /** Per call (its near-identical digest), per result digest: how often it failed that way since the last write. */
  private failures = new Map<string, Map<string, { count: number; error?: ToolErrorInfo }>>()
  private history: HistoryEntry[] = []
  /** Per period p: how many calls in a row equal (arguments and result) the call p places earlier. */
  private runs: number[] = []
  /** Every call of the goal (near-identical arguments and result), bounded: how often each was made. */
  private made = new Occurrences()
  private stale: StaleRun = { calls: [], count: 0, distinct: false }
  private excluded: (name: string) => boolean
  private polled: (name: string) => boolean
  private writes: (name: string) => boolean
  private mask: (text: string) => string

  /** `writes`: whether a successful call of this tool changes the workspace. */
  constructor(private config: LoopGuardConfig, writes: (name: string) => boolean) {
    this.excluded = wildcard(config.exclude)
    this.polled = wildcard(config.poll)
    this.writes = writes
    this.mask = volatileMasker(config.volatilePatterns)
  }

  reset(): void {
    this.streak = undefined
    this.failures.clear()
    this.history = []
    this.runs = []
    this.made.clear()
    this.stale = { calls: [], count: 0, distinct: false }
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
    const seen = this.describe(summary)
    const findings: LoopFinding[] = []
    const push = (kind: LoopKind, count: number, hint: number, limit: number, calls: LoopCall[], extra: Partial<LoopFinding> = {}) => {
      const level = levelOf(count, hint, limit)
      if (level) findings.push({ kind, level, count, calls, sameResult: false, ...extra })
    }
    const { softThreshold, hardThreshold, sameErrorHint, sameErrorLimit, cycleHint, cycleLimit, blockHint, blockLimit, pollHint, pollLimit } = this.config

    const streak = this.observeStreak(seen)
    if (streak.repeats > 1) {
      push('repeat', streak.repeats, softThreshold, hardThreshold, [seen.call], { sameResult: streak.sameResult, nearIdentical: streak.nearIdentical })
    }
    if (streak.polls > streak.repeats) push('poll', streak.polls, pollHint, pollLimit, [seen.call], { limit: pollLimit })

    const failed = this.observeFailure(seen, summary.error)
    if (failed && failed.count > 1) push('same-error', failed.count, sameErrorHint, sameErrorLimit, [seen.call], { error: failed.error })

    const key = `${seen.loose}#${seen.result}`
    const cycle = this.observeCycle({ key, call: seen.call })
    if (cycle) push('cycle', cycle.run, cycleHint, cycleLimit, cycle.calls)

    const block = this.observeBlock(key, seen)
    if (block) push('block', block.count, blockHint, blockLimit, [...block.calls], { repetition: this.config.blockRepetition })
    return findings
  }

  private describe(summary: ToolCallSummary): Observed {
    const exact = canonicalArguments(summary.arguments, this.config)
    const call: LoopCall = { name: summary.name, arguments: exact.text, json: exact.form !== 'invalid' }
    const sig = digest(`${call.name}\u0000${exact.form}\u0000${exact.text}`)
    let loose = sig
    let looseText = ''
    if (this.config.nearIdentical) {
      const form = canonicalArguments(summary.arguments, { ...this.config, loose: (text) => looseString(text, this.mask) })
      loose = digest(`${call.name}\u0000${form.form}\u0000${form.text}`)
      // Only parsed arguments: two malformed payloads are told apart by their exact text (their errors are counted anyway).
      if (this.config.argumentSimilarity > 0 && form.form === 'json' && form.text.length <= MAX_SIMILAR_CHARS) looseText = form.text
    }
    const outcome = summary.ok ? 'ok' : `error:${summary.error?.code}\u0000${this.mask(summary.error?.message ?? '')}`
    const result = digest(`${outcome}\u0000${this.mask(summary.content)}`)
    return { name: summary.name, sig, loose, looseText, result, ok: summary.ok, call }
  }

  /** Whether `next` is the same call as `last`: exactly, or near-identical with the same result. */
  private sameCall(last: Observed, next: Observed): boolean {
    if (last.sig === next.sig) return true
    if (!this.config.nearIdentical || last.name !== next.name || last.result !== next.result) return false
    if (last.loose === next.loose) return true
    const threshold = this.config.argumentSimilarity
    return threshold > 0 && !!last.looseText && !!next.looseText && similarity(last.looseText, next.looseText) >= threshold
  }

  /**
   * The run of the same call in a row. An unchanged result is a repeat; a changed successful result is
   * progress (polling), which starts the repeats over but not the polls; a changed failure is no progress.
   * A `poll` tool's successful calls are only polls, changed or not.
   */
  private observeStreak(seen: Observed): Streak {
    const streak = this.streak
    if (!streak || !this.sameCall(streak.last, seen)) {
      return this.streak = { last: seen, repeats: 1, polls: 1, sameResult: true, nearIdentical: false }
    }
    streak.polls++
    if (seen.sig !== streak.last.sig) streak.nearIdentical = true
    if (seen.ok && (this.polled(seen.name) || seen.result !== streak.last.result)) {
      streak.repeats = 1
      streak.sameResult = true
      streak.nearIdentical = false
    } else {
      streak.repeats++
      streak.sameResult &&= seen.result === streak.last.result
    }
    streak.last = seen
    return streak
  }

  /** Counts the same call failing the same way, consecutive or not; a success of a write tool starts every count over. */
  private observeFailure(seen: Observed, error: ToolErrorInfo | undefined) {
    if (seen.ok) {
      if (this.writes(seen.name)) this.failures.clear()
      else this.failures.delete(seen.loose)
      return undefined
    }
    let byResult = this.failures.get(seen.loose)
    // Re-inserted so the map's order is least recently failed first.
    this.failures.delete(seen.loose)
    this.failures.set(seen.loose, byResult ??= new Map())
    if (this.failures.size > MAX_FAILURE_ENTRIES) this.failures.delete(this.failures.keys().next().value!)
    const entry = byResult.get(seen.result) ?? { count: 0, error }
    entry.count++
    byResult.set(seen.result, entry)
    return entry
  }

  /**
   * The longest run of calls that each equal (near-identical arguments, same result) the call one period
   * earlier, for periods 2..maxCyclePeriod; ties go to the shorter period (A-B repeated 4 times also
   * matches period 4). A constant block is a repeat, not a cycle.
   */
  private observeCycle(entry: HistoryEntry): { run: number; calls: LoopCall[] } | undefined {
    const max = this.config.maxCyclePeriod
    for (let period = 2; period <= max; period++) {
      const earlier = this.history[this.history.length - period]
      this.runs[period] = earlier?.key === entry.key ? (this.runs[period] ?? 0) + 1 : 0
    }
    this.history.push(entry)
    if (this.history.length > max) this.history.shift()
    let best: { run: number; calls: LoopCall[] } | undefined
    for (let period = 2; period <= max; period++) {
      const run = this.runs[period]
      if (!run || (best && run <= best.run)) continue
      const block = this.history.slice(-period)
      if (block.every((e) => e.key === block[0].key)) continue
      best = { run, calls: block.map((e) => e.call) }
    }
    return best
  }

  /**
   * Where a goal redoes a block of calls it already did (a model that rebuilt its plan from a compacted
   * history does the same reads again, each returning what it returned before): the run of calls in a row
   * since the last call that was new in the goal, counting those made `blockRepetition` times before. Any
   * length, repeated back to back or not, one lookup per call. The first redo is not counted by default: after
   * a compaction the earlier results are out of view and reading them once more is fair; the second is a loop.
   * A run of one call repeated is a repeat, not a block; a polled tool's successful calls neither count nor
   * end a run.
   */
  private observeBlock(key: string, seen: Observed): StaleRun | undefined {
    if (seen.ok && this.polled(seen.name)) return
    const made = this.made.add(key)
    if (made === 1) {
      this.stale = { calls: [], count: 0, distinct: false }
      return
    }
    if (made <= this.config.blockRepetition) return
    const run = this.stale
    run.count++
    run.calls.push(seen.call)
    if (run.calls.length > BLOCK_CALLS_SHOWN) run.calls.shift()
    if (run.first === undefined) run.first = key
    else run.distinct ||= key !== run.first
    return run.distinct ? run : undefined
  }
}

/** `hard` at the limit (0: never), `soft` at every multiple of the hint below it. */
function levelOf(count: number, hint: number, limit: number): LoopFinding['level'] | undefined {
  if (limit && count >= limit) return 'hard'
  if (count >= hint && count % hint === 0) return 'soft'
}

function rank(finding: LoopFinding): number {
  return (finding.level === 'hard' ? 10 : 0) + PRIORITY[finding.kind]
}
