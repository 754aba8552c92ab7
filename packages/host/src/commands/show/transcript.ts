import { describeGoalStatus, describeShortfall, describeTurnOutcome, GoalFold, type Goal } from '@goalkeeper/goal'
import { isRecordOf, type Integrity, type SessionRecord, type UserMessage } from '@goalkeeper/session'
import { describeGoalChange } from '../render/goal-text.ts'
import { describeCompaction } from '../render/compaction.ts'
import { excerpt, fitLines, oneLine, shortArguments, wrapLines } from '../render/text.ts'
import { describeCheck, describeGoalSpend, SpendTally } from './spend.ts'
import { describeOtherRecord } from './other-records.ts'

export interface TranscriptOptions {
  /** Show tool results and goal prompts whole instead of shortened. */
  full: boolean
  /** What the log's signatures say: a tampered, cut or unsigned log is shown with warnings. */
  integrity?: Integrity
  /**
   * The width lines are fitted to (undefined: every line whole): one line per event, cut with an ellipsis;
   * messages and warnings are broken at spaces instead, so nothing of them is lost.
   */
  width?: number
}

/** The mark of every transcript line that comes from a record after the first that does not verify. */
export const UNVERIFIED = 'unverified |'

const pad = (value: number) => String(value).padStart(2, '0')
const clock = (ms: number) => {
  const date = new Date(ms)
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
}

const textOf = (message: UserMessage | undefined) =>
  (message?.content ?? []).map((block) => (block as { text?: string }).text ?? '').join('\n')

const indent = (text: string, prefix: string) => text.split('\n').map((line) => (prefix + line).trimEnd()).join('\n')

/** A session log as a readable transcript: turns, messages (goal rounds marked), tools, goal changes, outcomes. */
export function renderTranscript(records: readonly SessionRecord[], options: TranscriptOptions): string[] {
  const transcript = new Transcript(options)
  const lines: string[] = []
  for (const record of records) lines.push(...transcript.add(record, options.integrity))
  lines.push(...transcript.end(options.integrity))
  const warning = transcript.unsignedWarning(options.integrity)
  if (warning.length) lines.splice(lines[1]?.startsWith('  in ') ? 2 : 1, 0, ...warning)
  return lines
}

/**
 * The transcript record by record, as a log streams: what it gathers is what later records refer back to
 * (inputs waiting, goal objectives, spend per turn, the goal folded so far), never the records themselves.
 * Each record is given with what the signatures said when it was read: a tampered log's warning comes
 * before the first record from its bad line, and every record from there on is marked unverified.
 */
export class Transcript {
  private queued = new Map<string, UserMessage>()
  private settled = new Set<string>()
  private objectives = new Objectives()
  private tally = new SpendTally()
  private reading: Reading
  /** Inputs queued by unverified records: never run, never listed as waiting. */
  private forged = new Map<string, UserMessage>()
  private goal = new GoalFold()
  /** Whether the goal fold started: at the header, or at the first checkpoint of records read from a later seq. */
  private folding?: boolean
  private wrapped: (...text: string[]) => string[]
  private unverifiedWidth?: number

  constructor(private options: TranscriptOptions) {
    this.reading = { options, queued: this.queued, settled: this.settled, objectives: this.objectives, tally: this.tally }
    const width = options.width
    this.wrapped = (...text: string[]) => text.flatMap((line) => wrapLines(line, width, '   ').split('\n'))
    this.unverifiedWidth = width === undefined ? undefined : Math.max(20, width - UNVERIFIED.length - 1)
  }

  /** The lines of `record`; `integrity`: what the signatures said when it was read. */
  add(record: SessionRecord, integrity: Integrity | undefined): string[] {
    const tampered = integrity?.state === 'tampered' ? integrity : undefined
    const firstBad = tampered ? tampered.line - 1 : Infinity
    const lines: string[] = []
    if (record.seq >= firstBad) {
      if (record.seq === firstBad && tampered!.otherKey) {
        lines.push('', ...this.wrapped(`!! SIGNED WITH ANOTHER KEY: ${tampered!.reason}`,
          `!! this machine's session key is not the one that wrote the session: nothing can be verified, nothing is run (give it the writer's key; resume refuses until then)`))
      } else if (record.seq === firstBad) {
        lines.push('', ...this.wrapped(`!! TAMPERED: ${tampered!.reason}`,
          `!! everything below was written by someone other than goalkeeper: unverified, never run (resume refuses this session)`))
      }
      const from = lines.length
      lines.push(...fitRecord(record, renderRecord(record, this.reading), this.unverifiedWidth))
      for (let i = from; i < lines.length; i++) lines[i] = `${UNVERIFIED} ${lines[i]}`.trimEnd()
      if (isRecordOf(record, 'input/queued')) this.forged.set(record.data.message.id, record.data.message)
      return lines
    }
    // The goal as the verified records leave it: a log read from a later seq folds from its first checkpoint.
    this.folding ??= record.seq === 0 ? true : undefined
    if (this.folding === undefined && isRecordOf(record, 'session/checkpoint')) this.folding = true
    if (this.folding) this.goal.add(record)
    lines.push(...fitRecord(record, renderRecord(record, this.reading), this.options.width))
    return lines
  }

  /** The closing lines (the goal's standing, spend, inputs waiting, a cut end), with what the signatures finally said. */
  end(integrity: Integrity | undefined): string[] {
    const lines: string[] = []
    const { width } = this.options
    const goal = this.settledGoal()
    const spend = goal && describeGoalSpend(goal)
    const total = this.tally.summary()
    // What a complete goal stood on, or what kept it from completing, worded as every front end words it.
    const status = goal && (goal.phase === 'complete' || describeShortfall(goal)) ? `goal ${describeGoalStatus(goal)}` : undefined
    if (status || spend || total) lines.push('', ...this.wrapped(...[status, spend, total].filter((line): line is string => !!line)))
    for (const id of this.forged.keys()) this.queued.delete(id)
    const unrun = [...this.forged.values()].filter((message) => !this.settled.has(message.id))
    const waiting = [...this.queued.values()].filter((message) => !this.settled.has(message.id))
    const runs = integrity?.state === 'truncated' ? 'runs on resume --accept-truncation' : integrity?.state === 'unsigned' ? 'runs once the session is adopted' : 'runs on resume'
    const listed = (messages: UserMessage[], mark: string) =>
      messages.flatMap((message) => fitLines(`  ${mark}${describeMessage(message, { full: false }, this.objectives)}`, width).split('\n'))
    if (waiting.length) lines.push('', `waiting in the inbox (${runs}):`, ...listed(waiting, ''))
    if (unrun.length) lines.push('', 'unverified inputs (never run):', ...listed(unrun, `${UNVERIFIED} `))
    if (integrity?.state === 'truncated') lines.push('', ...this.wrapped(`!! CUT SHORT: ${integrity.reason}`, `!! resume refuses it until you accept that its end is lost: goalkeeper resume <id> --accept-truncation`))
    return lines
  }

  /** The warning of a log without signatures, which goes right after the header's lines; none for another log. */
  unsignedWarning(integrity: Integrity | undefined): string[] {
    if (integrity?.state !== 'unsigned') return []
    return this.wrapped(`!! NOT SIGNED: this log carries no signatures (written before sessions were signed, or they were removed), so nothing in it can be verified; resume refuses it until adopted (goalkeeper sessions adopt <id> --yes)`)
  }

  /**
   * The goal as the verified records leave it, its spend counted to the last model call (a `goal/change`
   * snapshot holds the spend of its moment only); undefined without a goal, or when its records do not fold
   * (the transcript above shows them anyway).
   */
  private settledGoal(): Goal | undefined {
    if (!this.folding) return undefined
    try {
      return this.goal.current
    } catch {
      return undefined
    }
  }
}

/**
 * A record's lines fitted to `width`: one line per event, cut with an ellipsis; a message's text broken at
 * spaces into indented lines instead; the header's directory stays whole (a path to copy).
 */
function fitRecord(record: SessionRecord, lines: string[], width: number | undefined): string[] {
  if (width === undefined) return lines
  if (isRecordOf(record, 'session/header')) return [fitLines(lines[0], width), ...lines.slice(1)]
  const prose = isRecordOf(record, 'user/message', 'assistant/message')
  return lines.flatMap((line) => (prose ? wrapLines(line, width, '    ') : fitLines(line, width)).split('\n'))
}

/** What reading a log so far has gathered, for the records that refer back to earlier ones. */
interface Reading {
  options: TranscriptOptions
  /** Inputs queued by id, until they run or are dropped. */
  queued: Map<string, UserMessage>
  /** Inputs that ran or were dropped. */
  settled: Set<string>
  objectives: Objectives
  tally: SpendTally
}

type Render = (record: SessionRecord, reading: Reading) => string[] | undefined

/** The transcript lines of one record: every registered type as text; only a type nobody registered is printed raw. */
function renderRecord(record: SessionRecord, reading: Reading): string[] {
  for (const render of [renderConversation, renderTool, renderGoal]) {
    const lines = render(record, reading)
    if (lines) return lines
  }
  if (isRecordOf(record, 'step/start', 'step/end')) return []
  // A type no package this host carries registered (a third party's): shown as it is.
  return describeOtherRecord(record) ?? [`  [${record.type}] ${oneLine(JSON.stringify(record.data) ?? '', 160)}`]
}

/** The header, inputs, turns and messages; undefined for other records. */
const renderConversation: Render = (record, { options, queued, settled, objectives, tally }) => {
  if (isRecordOf(record, 'session/header')) {
    const head = record.data
    const parent = head.parent ? `, forked from ${head.parent.id} at seq ${head.parent.seq}` : ''
    // The directory on a line of its own: the first line fits 80 columns, the path is kept whole to copy.
    return [`session ${head.id}, started ${new Date(head.createdAt).toISOString()}`, `  in ${head.cwd}${parent}`]
  }
  if (isRecordOf(record, 'input/queued')) {
    queued.set(record.data.message.id, record.data.message)
    return []
  }
  if (isRecordOf(record, 'input/cancelled', 'input/rejected')) {
    settled.add(record.data.messageId)
    const what = record.type === 'input/cancelled' ? 'cancelled' : 'rejected'
    const line = `  input ${what} (${record.data.reason}): ${describeMessage(queued.get(record.data.messageId), { full: false }, objectives) || record.data.messageId}`
    // Settled inputs are let go of: a long log's transcript holds only the inputs still waiting.
    queued.delete(record.data.messageId)
    return [line]
  }
  if (isRecordOf(record, 'turn/start')) return ['', `turn ${record.data.turn}  ${clock(record.at)}`]
  if (isRecordOf(record, 'user/message')) {
    settled.add(record.data.id)
    queued.delete(record.data.id)
    return [indent(describeMessage(record.data, options, objectives), '  ')]
  }
  if (isRecordOf(record, 'assistant/message')) {
    tally.answer(record.data.turn, record.data.usage)
    if (record.data.partial) return [indent(`assistant (cut off by ${record.data.error?.code ?? 'an error'}, asked again): ${record.data.text?.trim() ?? ''}`, '  ')]
    return record.data.text?.trim() ? [indent(`assistant: ${record.data.text.trim()}`, '  ')] : []
  }
  if (isRecordOf(record, 'turn/end')) {
    const spend = tally.turn(record.data.turn)
    return [`  turn ${record.data.turn} ${describeTurnOutcome(record.data.outcome)}${spend ? ` (${spend})` : ''}`]
  }
  if (isRecordOf(record, 'context/compacted')) {
    // A summary is a model call too, and the run's usage counts it.
    tally.answer(record.data.turn, record.data.usage)
    return describeCompaction(record.data, options.full)
  }
  return undefined
}

/** Tool calls and their results; undefined for other records. */
const renderTool: Render = (record, { options }) => {
  if (isRecordOf(record, 'tool/call')) return [`  tool ${record.data.name} ${options.full ? record.data.arguments : shortArguments(record.data.arguments, 120)}`]
  if (!isRecordOf(record, 'tool/result')) return undefined
  const body = options.full ? record.data.content ?? '' : excerpt(record.data.content ?? '', 6, 400)
  const [first, ...rest] = (record.data.ok ? body : `${record.data.error?.code ?? 'FAILED'}: ${body}`).split('\n')
  const lines = [`    ${record.data.ok ? '->' : '!!'} ${first}`.trimEnd(), ...rest.map((line: string) => `       ${line}`.trimEnd())]
  // The arguments that ran were not the model's (tool/before-call rewrites).
  for (const rewrite of Array.isArray(record.data.rewrites) ? record.data.rewrites : []) {
    lines.push(`       (arguments rewritten by ${rewrite.by}${rewrite.reason ? `: ${rewrite.reason}` : ''}) ${options.full ? rewrite.arguments : shortArguments(rewrite.arguments, 120)}`)
  }
  return lines
}

/** Goal changes, checks, judgements and usage; undefined for other records. */
const renderGoal: Render = (record, { options, objectives, tally }) => {
  // One per model call of a goal round: summed into its turn's line and the total instead of shown raw.
  if (isRecordOf(record, 'goal/usage')) {
    tally.priced(record.data)
    return []
  }
  if (isRecordOf(record, 'goal/check')) return describeCheck(record.data, options.full, options.width)
  if (isRecordOf(record, 'goal/change')) {
    objectives.add(record.data.goal)
    const change = { op: record.data.op, seq: record.seq, goal: record.data.goal ?? undefined, previous: undefined }
    return [`  ${describeGoalChange(change, options.width === undefined ? undefined : options.width - 2)}`]
  }
  if (isRecordOf(record, 'goal/judgement')) {
    const { judge, verdict, accepted, reasons } = record.data
    return [`  judge ${judge}: ${verdict}, completion ${accepted ? 'accepted' : 'refused'}: ${oneLine(reasons.join(' '), 200)}`]
  }
  return undefined
}

/**
 * The objective of every goal revision, from the goal snapshots of the `goal/change` records read so far:
 * a goal round names its goal and revision, and the objective is what that revision said.
 */
class Objectives {
  private byRevision = new Map<string, string>()
  add(goal: Pick<Goal, 'id' | 'revision' | 'objective'> | null | undefined): void {
    if (goal && typeof goal.objective === 'string') this.byRevision.set(`${goal.id}@${goal.revision}`, goal.objective)
  }

  of(source: { goalId: string; revision: number }): string | undefined {
    return this.byRevision.get(`${source.goalId}@${source.revision}`)
  }
}

/** A user message with its source: goal rounds show their round and, shortened, only the objective. */
function describeMessage(message: UserMessage | undefined, options: TranscriptOptions, objectives: Objectives): string {
  if (!message) return ''
  const text = textOf(message).trim()
  const source = message.source
  if (source?.kind === 'goal') {
    if (options.full) return `goal round ${source.round}:\n${text}`
    const objective = objectives.of(source)
    // Quoted as the round prompt quotes it, so that a multi-line objective stays on one line.
    return `goal round ${source.round}${objective ? ` (objective ${oneLine(JSON.stringify(objective), 100)})` : ''}`
  }
  if (source?.kind === 'plugin') return `[${source.name}] ${options.full ? text : oneLine(text, 200)}`
  return `user: ${text}`
}
