import type { Context } from 'cordis'
import type { Agent, AgentErrorInfo, ToolCallInfo } from '@goalkeeper/agent-loop'
import { describeSpend, describeTurnOutcome, formatTokens, type GoalActivation, type GoalChange } from '@goalkeeper/goal'
import type { AutoResumeNotice } from '@goalkeeper/goal-auto-resume'
import { compactionLine, type HeldRecords, isRecordOf, nextSeqOf, recordsOfTurn, recordsSince, type ContextCompactionData, type Session, type SessionRecord, type TurnOutcome, type UserMessage } from '@goalkeeper/session'
import type { ToolResult } from '@goalkeeper/tools'
import type { ModelRetryInfo, ModelStreamNotice } from '@goalkeeper/model'
import { summarizeChanges } from '@goalkeeper/loader'
import { STEP_LIMIT_CODE } from '@goalkeeper/goal-session'
import type { App } from '../../app.ts'
import { describeActivation, describeAutoResume, describeGoalChange } from '../render/goal-text.ts'
import { oneLine, shortArguments } from '../render/text.ts'
import { costOfRecords, describeCost, describeUsage, totalTokens, usageOf, type CostOfUsage } from '../render/usage.ts'
import { describeToolResult } from '../render/tool-result.ts'
import type { Terminal } from './terminal.ts'

/**
 * Shows one agent's work while it happens: streamed text, rounds, tool calls and failures, goal changes
 * and activation, on stderr; with `--json`, every session record and goal event as JSON lines on stdout.
 */
export class LiveView {
  private agent: Agent | undefined
  /** JSON mode: the first seq each session appended before the agent was known (a resume's repair records). */
  private firstSeen = new Map<string, number>()
  /** JSON mode: the next record of the agent's session to print. */
  private nextSeq = 0
  private disposers: (() => void)[] = []
  /** Set when the goal changed while this view watched (a model may create one in a plain run). */
  goalChanged = false
  /** How many stream events the last broken stream had delivered, until the loop's next answer is told. */
  private brokenFrames: number | undefined
  /** The turn being worked on, for the live status line; its timer redraws the elapsed time. */
  private working: { turn: number; since: number; timer: NodeJS.Timeout } | undefined
  /** Reasoning arrived as deltas this turn, so it is not printed again when its message is recorded. */
  private reasoningStreamed = false

  constructor(private ctx: Context, private term: Terminal, private options: { showReasoning?: boolean } = {}) {
    this.listen()
  }

  /**
   * Starts showing `agent`'s events. With --json, a new session is printed from its header; a resumed one
   * from the first record this process appended (its old history is `goalkeeper show --json`).
   */
  follow(agent: Agent, resumed: boolean): void {
    this.agent = agent
    // A seq, not a position in `records`: those start at `firstSeq`, which a live session moves on.
    const seen = this.firstSeen.get(agent.id)
    this.nextSeq = resumed ? (seen ?? nextSeqOf(agent.session)) : 0
    this.firstSeen.clear()
    this.printRecords(agent.session)
  }

  dispose(): void {
    for (const dispose of this.disposers.splice(0)) dispose()
    this.stopWorking()
    this.term.endStream()
  }

  private mine(agent: { id: string }): boolean {
    return agent.id === this.agent?.id
  }

  /** One named handler per event; those about an agent react to the followed agent's only. */
  private listen() {
    const { ctx } = this
    const mine = <A extends unknown[]>(handler: (agent: Agent, ...args: A) => void) => (agent: Agent, ...args: A) => {
      if (this.mine(agent)) handler.call(this, agent, ...args)
    }
    this.disposers.push(
      ctx.on('session/event', (session: Session, record: SessionRecord) => this.onRecord(session, record)),
      ctx.on('agent/text-delta', mine(this.onTextDelta)),
      ctx.on('agent/reasoning-delta', mine(this.onReasoningDelta)),
      ctx.on('agent/turn-start', mine(this.onTurnStart)),
      ctx.on('agent/tool-start', mine(this.onToolStart)),
      ctx.on('agent/tool-end', mine(this.onToolEnd)),
      ctx.on('agent/turn-end', mine(this.onTurnEnd)),
      ctx.on('agent/compacted', mine(this.onCompacted)),
      ctx.on('agent/error', mine(this.onError)),
      ctx.on('goal/changed', mine(this.onGoalChanged)),
      ctx.on('goal/auto-resume', mine(this.onAutoResume)),
      ctx.on('goal/activation', mine(this.onActivation)),
      // One agent per command, so a provider's wait or stream trouble is this agent's.
      ctx.on('model/retry', (provider: string, retry: ModelRetryInfo) => this.agent && this.onRetry(this.agent, provider, retry)),
      ctx.on('model/stream', (provider: string, notice: ModelStreamNotice) => this.agent && this.onStream(this.agent, provider, notice)),
    )
  }

  private onRecord(session: Session, record: SessionRecord) {
    const { term } = this
    const followed = session.id === this.agent?.id
    // Reasoning stays out of the answer; asked for, it goes to stderr once its message is recorded.
    if (followed && isRecordOf(record, 'assistant/message')) {
      if (this.options.showReasoning && !this.reasoningStreamed && record.data.reasoning) {
        // Prose: broken at spaces to the width, not cut.
        const lines = record.data.reasoning.trim().split('\n')
        for (const line of lines) term.progress(`  reasoning: ${line}`.trimEnd(), 'wrap')
      }
      // A partial answer is recorded right before the loop calls the model again for the whole answer.
      if (record.data.partial) this.onPartialAnswer()
    }
    if (followed && this.working) this.drawStatus()
    if (!term.json) return
    if (!this.agent) {
      if (!this.firstSeen.has(session.id)) this.firstSeen.set(session.id, record.seq)
    } else if (followed) this.printRecords(session)
  }

  private onPartialAnswer() {
    this.term.cutOff()
    const frames = this.brokenFrames === undefined ? '' : ` after ${this.brokenFrames} frame${this.brokenFrames === 1 ? '' : 's'}`
    this.brokenFrames = undefined
    this.term.progress(`  model stream broke${frames}; asking again (1 of 1)`)
  }

  private onTextDelta(_agent: Agent, _turn: number, _step: number, text: string) {
    this.term.delta(text)
  }

  private onReasoningDelta(_agent: Agent, _turn: number, _step: number, text: string) {
    // On a terminal, reasoning is shown as it arrives; elsewhere once its message is recorded (line-based).
    if (!this.options.showReasoning || !this.term.live) return
    this.reasoningStreamed = true
    this.term.reasoning(text)
  }

  private onTurnStart(agent: Agent, turn: number, messages: UserMessage[]) {
    this.startWorking(turn)
    const source = messages.find((message) => message.source?.kind === 'goal')?.source
    if (source?.kind !== 'goal') return
    const goal = this.goal(agent)
    const max = goal?.maxGoalRounds
    const spend = goal && describeSpend(goal)
    this.term.progress(`round ${source.round}${max ? `/${max}` : ''}${spend ? ` (${spend})` : ''}`)
  }

  private onToolStart(_agent: Agent, call: ToolCallInfo) {
    // Whole on one line: the terminal's width (when there is one) cuts it, not a length of its own.
    this.term.progress(`  ${call.name} ${shortArguments(call.arguments, Infinity)}`)
  }

  private onToolEnd(_agent: Agent, call: ToolCallInfo, result: ToolResult) {
    const { term } = this
    if (result.ok) {
      const tool = this.ctx.get('tools')?.get(call.name)
      for (const line of describeToolResult(tool, call, result, term.colour, term.width)) term.progress(line)
      return
    }
    const code = result.error?.code ?? 'TOOL_FAILED'
    term.progress(`  ${call.name} failed: ${code}: ${oneLine(result.error?.message ?? result.content, 160)}`)
  }

  private onTurnEnd(agent: Agent, turn: number, outcome: TurnOutcome) {
    const { term } = this
    this.brokenFrames = undefined
    this.stopWorking()
    term.endStream()
    // A normal completion is no news, and an error has its own line from agent/error.
    if (outcome.kind !== 'completed' && outcome.kind !== 'error') term.progress(`turn ${turn} ${describeTurnOutcome(outcome)}`)
    const records = recordsOfTurn(agent.session.records, turn)
    const usage = usageOf(records)
    if (!usage) return
    const cost = costOfRecords(records, this.price(agent))
    term.progress(`  tokens: ${describeUsage(usage)}${cost === undefined ? '' : `; cost ${describeCost(cost)}`}`)
    term.record({ type: 'usage', session: agent.id, turn, usage })
  }

  private onRetry(agent: Agent, provider: string, retry: ModelRetryInfo) {
    this.term.progress(`  waiting ${(retry.waitMs / 1000).toFixed(1)} s before retry ${retry.attempt} of ${retry.of} (${provider}): ${retry.error.code}: ${oneLine(retry.error.message, 160)}`)
    this.term.record({ type: 'retry', session: agent.id, provider, ...retry })
  }

  private onCompacted(agent: Agent, data: ContextCompactionData) {
    this.term.progress(`  ${compactionLine(data)}`)
    const { turn, step, reason, method, replaced, elided, tokensBefore, tokensAfter, contextWindow } = data
    this.term.record({ type: 'compaction', session: agent.id, turn, step, reason, method, replaced, elided: elided.length, tokensBefore, tokensAfter, contextWindow: contextWindow ?? null })
  }

  private onStream(agent: Agent, provider: string, notice: ModelStreamNotice) {
    this.term.record({ type: 'stream', session: agent.id, provider, ...notice })
    if (notice.kind === 'broken') {
      this.term.cutOff()
      this.brokenFrames = notice.frames
      return
    }
    this.term.progress(`  no data from the model for ${seconds(notice.silentMs)} (${provider}; gives up after ${seconds(notice.limitMs)})`)
  }

  private onError(agent: Agent, turn: number | undefined, error: AgentErrorInfo) {
    const round = turn === undefined ? undefined : this.ctx.get('goals')?.roundOf(agent, turn)
    // A goal round at the step cap is not a failure: the round ends there and the goal goes on (DESIGN.md 9.7).
    if (round && error.code === STEP_LIMIT_CODE) this.term.progress(`round ${round.round} hit the step cap, so it ends here and the goal goes on: ${oneLine(error.message, 240)}`)
    else this.term.progress(`error${turn === undefined ? '' : ` in turn ${turn}`}: ${error.code}: ${oneLine(error.message, 200)}`)
  }

  private onGoalChanged(agent: Agent, change: GoalChange) {
    this.goalChanged = true
    this.term.record({ type: 'goal', session: agent.id, op: change.op, seq: change.seq, goal: change.goal ?? null })
    this.term.progress(describeGoalChange(change, this.term.width))
  }

  private onAutoResume(agent: Agent, notice: AutoResumeNotice) {
    this.term.record({ type: 'auto-resume', session: agent.id, ...notice })
    this.term.progress(describeAutoResume(notice))
  }

  private onActivation(agent: Agent, activation: GoalActivation) {
    this.term.record({ type: 'activation', session: agent.id, activation })
    const line = describeActivation(activation, this.goal(agent))
    if (line) this.term.progress(line)
  }

  /** Prints the records from `nextSeq` on: contiguous, each once, whichever way they became known. */
  private printRecords(session: HeldRecords) {
    if (!this.term.json || !this.agent) return
    for (const record of recordsSince(session, this.nextSeq)) this.term.record({ type: 'record', session: this.agent.id, record })
    this.nextSeq = nextSeqOf(session)
  }

  /** How this agent's model calls are priced, when the goal-budget plugin is loaded. */
  price(agent: Agent): CostOfUsage | undefined {
    const budget = this.ctx.get('goalBudget')
    if (!budget) return undefined
    const description = this.ctx.get('models')?.describe(agent.model)
    return (usage) => budget.costOf(description, usage)
  }

  private startWorking(turn: number) {
    this.stopWorking()
    this.reasoningStreamed = false
    if (!this.term.live) return
    // The elapsed time moves once a second; unref'd, so a status line never keeps the process alive.
    const timer = setInterval(() => this.drawStatus(), 1000)
    timer.unref()
    this.working = { turn, since: Date.now(), timer }
    this.drawStatus()
  }

  private stopWorking() {
    if (!this.working) return
    clearInterval(this.working.timer)
    this.working = undefined
    this.term.status(undefined)
  }

  /** `working 12s · 1.2k tokens · round 2/5 · tokens 3.4k/10k, cost $0.01/$1.00`. */
  private drawStatus() {
    const { working, agent } = this
    if (!working || !agent) return
    const parts = [`working ${elapsed(Date.now() - working.since)}`]
    const tokens = totalTokens(usageOf(recordsOfTurn(agent.session.records, working.turn)))
    parts.push(`${formatTokens(tokens)} tokens`)
    const round = this.ctx.get('goals')?.roundOf(agent, working.turn)
    const goal = this.goal(agent)
    if (round && goal) {
      parts.push(`round ${round.round}/${goal.maxGoalRounds}`)
      const spend = describeSpend(goal)
      if (spend) parts.push(spend)
    }
    this.term.status(parts.join(' · '))
  }

  private goal(agent: Agent) {
    return this.ctx.get('goals')?.get(agent)
  }
}

const seconds = (ms: number) => `${ms / 1000} s`

/** `7s`, `2m05s`: whole seconds, as a status line counts them. */
export function elapsed(ms: number): string {
  const total = Math.floor(ms / 1000)
  return total < 60 ? `${total}s` : `${Math.floor(total / 60)}m${String(total % 60).padStart(2, '0')}s`
}

/** Under --watch, one line per reload of the composition. */
export function showReloads(app: App, term: Terminal): () => void {
  return app.loader.on('reload', (report) => {
    if (report.error) term.note(`reload failed: ${report.error}; kept the running composition`)
    else term.note(`reloaded ${report.file}: ${summarizeChanges(report.changes)}${report.ok ? '' : ` (${report.failed.length + report.waiting.length} not loaded)`}`)
  })
}
