import { describeGoalStatus, foldGoal, type Goal, type GoalJudgementRecord, isGoalSourced } from '@goalkeeper/goal'
import { isRecordOf, type SessionRecord } from '@goalkeeper/session'

/** How much of a tool result or check output a goal page carries: the tail, where the verdict is. */
export const TAIL_CHARS = 4000

/** One line of a diff the page renders: ' ' kept, '-' removed, '+' added. */
export type DiffLine = [mark: ' ' | '-' | '+', text: string]

export interface ToolView {
  name: string
  arguments: string
  ok?: boolean
  /** The result's tail (TAIL_CHARS), or the denial's reason. */
  result?: string
  /** Who refused the call (a guard, the permissions, the goal) when it was denied. */
  deniedBy?: string
  /** An edit or a write, as the lines it removed and added. */
  diff?: { path: string; lines: DiffLine[] }
}

export interface RoundView {
  /** The goal round's number; 0 for a turn a person started. */
  round: number
  turn: number
  startedAt: number
  tools: ToolView[]
  checks: { command: string; ok: boolean; exitCode: number | null; output: string }[]
  /** The judge's decisions on this round's completion (a claim, or a condition goal's review after it). */
  judgements: JudgementView[]
  compactions: { reason: string; method: string }[]
  /** Why the round stopped early: guard denials and blocks. */
  stops: string[]
  usage: { tokens: number; costUsd: number | null; activeTimeMs: number; calls: number }
  /** The model's text of the round's last step. */
  text: string
  outcome?: string
}

export type JudgementView = Omit<GoalJudgementRecord, 'goalId'>

export interface GoalView {
  session: string
  cwd: string
  goal: Goal | null
  /** What the goal stands on, worded by the goal package (`describeGoalStatus`): `complete (verified: 2 checks passed; judged met by cheap)`, or why it is not complete. */
  status: string | null
  rounds: RoundView[]
  answer: string
  /**
   * Set when the session is open in this process and holds its records from this seq on (a checkpoint): a
   * live session lets go of what precedes its last checkpoint. The goal, its spend and status count the whole
   * log (the goal's checkpoint part carries them); `rounds` are those from here on (`show` reads the rest).
   */
  heldFrom?: number
}

/** How much of a model's text or a call's arguments a page carries: their head. */
export const HEAD_CHARS = 20_000

// Terminal escapes and other control characters (tabs and newlines kept): shown as text they are noise,
// and a page has no use for them.
// eslint-disable-next-line no-control-regex
const CONTROL = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|[\x00-\x08\x0b-\x1f\x7f\x9b]/g
export const clean = (text: string) => text.replace(CONTROL, '')
const tail = (text: string) => clean(text.length > TAIL_CHARS ? `…${text.slice(-TAIL_CHARS)}` : text)
const head = (text: string) => clean(text.length > HEAD_CHARS ? `${text.slice(0, HEAD_CHARS)}…` : text)

function diffOf(name: string, args: string): ToolView['diff'] {
  if (name !== 'edit_file' && name !== 'write_file') return undefined
  let parsed: Record<string, unknown>
  try {
    parsed = JSON.parse(args)
  } catch {
    return undefined
  }
  const path = typeof parsed.path === 'string' ? parsed.path : '?'
  const split = (value: unknown) => (typeof value === 'string' ? head(value).split('\n') : [])
  if (name === 'write_file') return { path: clean(path), lines: split(parsed.content).map((line): DiffLine => ['+', line]) }
  return { path: clean(path), lines: [...split(parsed.old_string).map((line): DiffLine => ['-', line]), ...split(parsed.new_string).map((line): DiffLine => ['+', line])] }
}

/**
 * A session's goal as its page shows it: one entry per turn (goal rounds numbered), with its tool calls,
 * edits as diffs, checks, compactions, stops and spend. Texts are the log's own (masked when written);
 * the page renders them as text only.
 */
export function goalView(session: string, records: readonly SessionRecord[], held?: { firstSeq: number; cwd: string }): GoalView {
  const rounds: RoundView[] = []
  const calls = new Map<string, ToolView>()
  let current: RoundView | undefined
  // A session held from a checkpoint keeps its header apart from its records.
  let cwd = held?.cwd ?? ''
  let answer = ''
  const byTurn = new Map<number, RoundView>()
  for (const record of records) {
    if (isRecordOf(record, 'session/header')) cwd = record.data.cwd
    else if (isRecordOf(record, 'turn/start')) {
      current = { round: 0, turn: record.data.turn, startedAt: record.at, tools: [], checks: [], judgements: [], compactions: [], stops: [], usage: { tokens: 0, costUsd: 0, activeTimeMs: 0, calls: 0 }, text: '' }
      byTurn.set(record.data.turn, current)
      rounds.push(current)
    } else if (isRecordOf(record, 'user/message') && current && isGoalSourced(record.data)) current.round = record.data.source.round
    else if (isRecordOf(record, 'assistant/message') && current && !record.data.partial) {
      current.text = head(record.data.text)
      if (record.data.text) answer = current.text
    } else if (isRecordOf(record, 'tool/call') && current) {
      const view: ToolView = { name: clean(record.data.name), arguments: head(record.data.arguments) }
      const diff = diffOf(record.data.name, record.data.arguments)
      if (diff) view.diff = diff
      calls.set(record.data.callId, view)
      current.tools.push(view)
    } else if (isRecordOf(record, 'tool/result')) {
      const view = calls.get(record.data.callId)
      if (!view) continue
      view.ok = record.data.ok
      view.result = tail(record.data.denied ? record.data.denied.reason : record.data.content)
      if (record.data.denied) {
        view.deniedBy = record.data.denied.by
        byTurn.get(record.data.turn)?.stops.push(clean(`${record.data.denied.by}: ${record.data.denied.reason}`))
      }
    } else if (isRecordOf(record, 'context/compacted')) byTurn.get(record.data.turn)?.compactions.push({ reason: record.data.reason, method: record.data.method })
    else if (isRecordOf(record, 'goal/check') && current) current.checks.push({ command: clean(record.data.command), ok: record.data.ok, exitCode: record.data.exitCode, output: tail(record.data.output) })
    else if (isRecordOf(record, 'goal/judgement') && current) current.judgements.push(judgementView(record.data))
    else if (isRecordOf(record, 'goal/usage')) {
      const round = byTurn.get(record.data.turn)
      if (!round) continue
      round.usage.tokens += record.data.tokens
      round.usage.costUsd = round.usage.costUsd === null || record.data.costUsd === null ? null : round.usage.costUsd + record.data.costUsd
      round.usage.activeTimeMs += record.data.activeTimeMs
      round.usage.calls++
    } else if (isRecordOf(record, 'goal/change') && current && record.data.op === 'block' && record.data.goal.blockedReason) {
      const reason = record.data.goal.blockedReason
      current.stops.push(clean(`blocked: ${reason.code}: ${reason.message}`))
    } else if (isRecordOf(record, 'turn/end')) {
      const round = byTurn.get(record.data.turn)
      if (round) round.outcome = record.data.outcome.kind
    }
  }
  let goal: Goal | null = null
  try {
    goal = foldGoal(records) ?? null
  } catch {
    // A log whose goal records do not replay: its rounds are still shown, its goal is not.
  }
  return { session, cwd, goal, status: goal && clean(describeGoalStatus(goal)), rounds, answer, ...(held && held.firstSeq > 0 && { heldFrom: held.firstSeq }) }
}

/** A judge's decision as the page shows it: the model's reasons cleaned like any model text. */
function judgementView(data: GoalJudgementRecord): JudgementView {
  return {
    judge: clean(data.judge),
    verdict: data.verdict,
    accepted: data.accepted,
    reasons: data.reasons.map(clean),
    missing: data.missing.map(clean),
    diff: data.diff && { summary: clean(data.diff.summary), sha256: data.diff.sha256 },
  }
}
