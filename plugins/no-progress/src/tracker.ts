import type { StepSummary, ToolCallSummary } from '@goalkeeper/agent-loop'
import { DEFAULT_VOLATILE_PATTERNS, digest, NewResults, resultFingerprint, similarity, volatileMasker } from '@goalkeeper/policy'
import type { NoProgressConfig } from './config.ts'
import type { IdleFinding, IdleRound } from './types.ts'

/** What one open turn has shown so far. */
interface TurnState {
  turn: number
  /** A progress tool succeeded in this turn. */
  progress: boolean
  /** This turn was already counted as an idle round. */
  counted: boolean
  /** Tool calls made in this turn (none of them progress). */
  calls: number
  /** What those calls were (`callKey`), to tell whether a later round redoes them. */
  keys: Set<string>
  /** The latest replies without a tool call, in a row, that read the same (normalised, and as given). */
  replies: string[]
  quoted: string[]
  /** The latest steps with tool calls, in a row, that said the same thing: their text and the calls that found nothing. */
  echo?: { text: string; quoted: string; steps: number; calls: number }
}

/** What one step's tool calls brought. */
interface StepNews {
  /** A progress tool succeeded. */
  progress: boolean
  /** A read tool found something not seen before in the goal. */
  informed: boolean
  /** A call succeeded with a result that is not empty. */
  found: boolean
  /**
   * Calls that found nothing: failures and empty results. A call that answered what an earlier one did is not
   * counted: files with the same contents are different files, and a first redo after a compaction is fair
   * (loop-guard stops the second).
   */
  barren: number
}

const mask = volatileMasker(DEFAULT_VOLATILE_PATTERNS)

/** The text as compared: volatile parts and numbers masked, case and spacing ignored. */
function normalise(text: string): string {
  return mask(text).toLowerCase().replace(/\d+/g, '#').replace(/\s+/g, ' ').trim()
}

/**
 * Per-agent no-progress state: the goal rounds in a row that changed nothing (kept across rounds and the
 * turns in between) and, within the open turn, the replies in a row without a tool call.
 */
export class IdleTracker {
  private idle: IdleRound[] = []
  /** Per idle round in `idle`, the calls it made (`callKey`). */
  private idleCalls: Set<string>[] = []
  private current: TurnState | undefined
  /** The results seen in the goal. */
  private results: NewResults
  private mask: (text: string) => string

  /** `isProgress`: a successful call of the tool is progress; `isRead`: it is progress when it finds something new. */
  constructor(private config: NoProgressConfig, private isProgress: (tool: string) => boolean, private isRead: (tool: string) => boolean) {
    this.results = new NewResults(config)
    this.mask = volatileMasker(config.volatilePatterns)
  }

  /** Starts the counts over; a turn already counted as an idle round is not counted again when it goes on. */
  reset(): void {
    this.idle = []
    this.idleCalls = []
    this.results.clear()
    if (!this.current) return
    this.current.replies = []
    this.current.quoted = []
    this.current.echo = undefined
  }

  /** Remembers the step's calls and tells what they brought. */
  private news(calls: readonly ToolCallSummary[]): StepNews {
    const news: StepNews = { progress: false, informed: false, found: false, barren: 0 }
    for (const call of calls) {
      // A call cut short by a cancel says nothing about the model.
      if (call.error?.code === 'ABORTED') continue
      if (call.ok && this.isProgress(call.name)) news.progress = true
      if (this.results.add(call) && this.isRead(call.name)) news.informed = true
      if (this.results.found(call)) news.found = true
      else news.barren++
    }
    return news
  }

  /** Counts a step with tool calls toward the echo: the same text while the calls bring nothing new. */
  private echo(state: TurnState, text: string, news: StepNews): IdleFinding | undefined {
    const quoted = text.trim()
    const normal = normalise(quoted)
    const fresh = news.progress || news.found
    if (!normal || fresh) {
      state.echo = normal ? { text: normal, quoted, steps: 0, calls: 0 } : undefined
      return
    }
    const echo = state.echo && this.sameText(state.echo.text, normal) ? state.echo : state.echo = { text: normal, quoted, steps: 0, calls: 0 }
    echo.quoted = quoted
    echo.steps++
    echo.calls += news.barren
    if (this.config.echo && echo.calls >= this.config.echo) {
      return { kind: 'echo', level: 'stop', rounds: [], replies: [quoted], steps: echo.steps, calls: echo.calls }
    }
  }

  /** Feeds one step; `roundOf` names the goal round the turn is, if any (asked only when a round may count). */
  observe(summary: StepSummary, roundOf: () => number | undefined): IdleFinding | undefined {
    const state = this.current?.turn === summary.turn
      ? this.current
      : this.current = { turn: summary.turn, progress: false, counted: false, calls: 0, keys: new Set(), replies: [], quoted: [] }
    // A model error or the token limit ends the turn on its own, and the goal driver settles it.
    if (summary.finish === 'error' || summary.finish === 'max-tokens') return
    if (summary.toolCalls.length) {
      const news = this.news(summary.toolCalls)
      state.replies = []
      state.quoted = []
      if (news.progress || news.informed) {
        state.progress = true
        this.idle = []
        this.idleCalls = []
        return this.echo(state, summary.text, news)
      }
      const calls = summary.toolCalls.filter((call) => call.error?.code !== 'ABORTED')
      const keys = calls.map((call) => this.callKey(call))
      state.calls += calls.length
      keys.forEach((key) => state.keys.add(key))
      return this.redone(state, keys, roundOf) ?? this.echo(state, summary.text, news)
    }
    state.echo = undefined

    const quoted = summary.text.trim()
    const text = normalise(quoted)
    const previous = state.replies.at(-1)
    if (previous !== undefined && this.sameText(previous, text)) {
      state.replies.push(text)
      state.quoted.push(quoted)
    } else {
      state.replies = [text]
      state.quoted = [quoted]
    }
    if (this.config.monologue && state.replies.length >= this.config.monologue) {
      return { kind: 'monologue', level: 'stop', rounds: [], replies: [...state.quoted] }
    }

    return this.countRound(state, roundOf, { text: quoted })
  }

  /**
   * A turn that ended at the step limit: a goal round that never stopped calling tools. If none of its
   * calls was progress it is an idle round too, so step-limit rounds that change nothing stop the goal
   * like rounds that only talk.
   */
  observeStepLimit(turn: number, roundOf: () => number | undefined): IdleFinding | undefined {
    const state = this.current?.turn === turn ? this.current : undefined
    if (!state) return
    return this.countRound(state, roundOf, { text: '', stepLimit: true })
  }

  /**
   * The last idle round allowed, redoing what every idle round before it did: a step whose calls (same tool,
   * arguments and result) each of those rounds made already. The round would end like them, so it is
   * counted and the goal stopped now rather than after its closing reply.
   */
  private redone(state: TurnState, keys: readonly string[], roundOf: () => number | undefined): IdleFinding | undefined {
    if (state.counted || state.progress || !keys.length || this.idle.length !== this.config.rounds - 1) return
    if (!this.idleCalls.length || !keys.every((key) => this.idleCalls.every((made) => made.has(key)))) return
    const round = roundOf()
    if (round === undefined) return
    state.counted = true
    return { kind: 'idle-rounds', level: 'stop', rounds: [...this.idle, { round, calls: state.calls, text: '', redone: true }], replies: [] }
  }

  /** A call as the redo check compares it: the tool, its arguments and its result with volatile parts masked. */
  private callKey(call: ToolCallSummary): string {
    return digest(`${call.name}\u0000${JSON.stringify(call.arguments ?? null)}\u0000${resultFingerprint(call, this.mask)}`)
  }

  private countRound(state: TurnState, roundOf: () => number | undefined, end: Pick<IdleRound, 'text' | 'stepLimit'>): IdleFinding | undefined {
    if (state.counted || state.progress) return
    const round = roundOf()
    if (round === undefined) return
    state.counted = true
    this.idle.push({ round, calls: state.calls, ...end })
    this.idleCalls.push(state.keys)
    if (this.idle.length >= this.config.rounds) return { kind: 'idle-rounds', level: 'stop', rounds: [...this.idle], replies: [] }
    if (this.pending()) return { kind: 'idle-rounds', level: 'hint', rounds: [...this.idle], replies: [] }
  }

  /** The hint for the next round, once all but one of the idle rounds allowed have passed. */
  pending(): IdleFinding | undefined {
    const { rounds, hint } = this.config
    if (!hint || rounds < 2 || this.idle.length !== rounds - 1) return
    return { kind: 'idle-rounds', level: 'hint', rounds: [...this.idle], replies: [] }
  }

  private sameText(a: string, b: string): boolean {
    if (!a || !b) return a === b
    return similarity(a, b) >= this.config.textSimilarity
  }
}
