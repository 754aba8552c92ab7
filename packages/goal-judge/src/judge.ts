import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import { BLOCK, tokensOf, type CheckEvidence, type GoalJudgeService, type GoalJudgementRecord, type GoalState } from '@goalkeeper/goal'
import { describeError } from '@goalkeeper/kit'
import type { ModelProvider, ModelRequest } from '@goalkeeper/model'
import type { Usage } from '@goalkeeper/session'
import { snapshotBase, workspaceDiff } from './diff.ts'
import { completionMessage, namedFiles, renderEvidence, type Evidence } from './evidence.ts'
import { JUDGE_SYSTEM_PROMPT } from './prompt.ts'
import { parseVerdict, type Verdict } from './verdict.ts'

export interface JudgeConfig {
  /** The model provider entry that judges; the goal's own model (in a fresh context) when unset. */
  model?: string
  /** Rejections in a row after which the goal blocks `judge-rejected` instead of another round. */
  maxRejections: number
  /** What "cannot tell" does to a completion. */
  cannotTell: 'reject' | 'accept'
  /** Calls per judgement when the judge errs, times out or answers off the schema. */
  attempts: number
  timeoutMs: number
  maxEvidenceChars: number
  maxTokens: number
}

type Review = Awaited<ReturnType<GoalJudgeService['review']>>
type Answer = { text: string; usage?: Usage; error?: string }

/** `ctx.goalJudge`: decides whether a completion the checks let through stands. */
export class GoalJudge implements GoalJudgeService {
  /** The work tree when each goal began (a `git stash create` commit), by goal id. */
  private readonly bases = new Map<string, Promise<string | undefined>>()

  constructor(private readonly ctx: Context, private readonly config: JudgeConfig) {}

  /** A goal began: its work tree is the base its diff is taken against. */
  remember(goalId: string, cwd: string): void {
    this.bases.set(goalId, snapshotBase(cwd).catch(() => undefined))
  }

  forget(goalId: string): void {
    this.bases.delete(goalId)
  }

  async review(agent: Agent, goal: GoalState, input: { turn: number; step: number; cwd: string; checks: CheckEvidence[]; signal?: AbortSignal; claimed?: boolean }): Promise<Review> {
    const judge = this.config.model ?? agent.model
    const provider = this.ctx.models.get(judge)
    const diff = await workspaceDiff(input.cwd, await this.bases.get(goal.id)).catch(() => undefined)
    const completion = completionMessage(agent.session, input.turn)
    const evidence: Evidence = { objective: goal.objective, checks: input.checks, diff, completion, files: await namedFiles(input.cwd, completion) }
    const request: ModelRequest = {
      system: JUDGE_SYSTEM_PROMPT,
      messages: [{ role: 'user', content: [{ type: 'text', text: renderEvidence(goal, evidence, this.config.maxEvidenceChars) }] }],
      tools: [],
      maxTokens: this.config.maxTokens,
    }
    let verdict: Verdict | undefined
    let problem = provider ? 'no answer' : `no model provider is registered as "${judge}"`
    for (let attempt = 1; provider && attempt <= this.config.attempts && !verdict; attempt++) {
      const started = Date.now()
      const answer = await this.ask(provider, request, input.signal)
      if (input.signal?.aborted) return { stands: false, code: 'GOAL_JUDGE_CANCELLED', message: 'The completion was not judged: the call was cancelled.' }
      const stale = this.count(agent, goal, input, answer.usage, Date.now() - started)
      if (stale) return stale
      const parsed = answer.error === undefined ? parseVerdict(answer.text) : undefined
      if (parsed?.ok) verdict = parsed.value
      else problem = answer.error ?? `its answer does not match the verdict schema: ${parsed!.ok ? '' : parsed!.why}`
    }
    const record = (v: Verdict, accepted: boolean): GoalJudgementRecord =>
      ({ goalId: goal.id, judge, verdict: v.verdict, accepted, reasons: v.reasons, missing: v.missing, diff: diff ? { summary: diff.summary, sha256: diff.sha256 } : null })
    if (!verdict) {
      const tries = provider ? `${this.config.attempts} ${this.config.attempts === 1 ? 'try' : 'tries'}` : 'no try'
      const reason = `The judge ${judge} could not decide after ${tries}: ${problem}.`
      this.ctx.goals.recordJudgement(agent, record({ verdict: 'cannot-tell', reasons: [reason], missing: [] }, false))
      return this.stop(agent, goal, input.turn, BLOCK.judgeFailed, reason)
    }
    const accepted = verdict.verdict === 'met' || (verdict.verdict === 'cannot-tell' && this.config.cannotTell === 'accept')
    const judged = this.ctx.goals.recordJudgement(agent, record(verdict, accepted))
    if (accepted) return { stands: true }
    const message = refusal(judge, verdict)
    // A condition goal's review after a round with no completion claim is not a refusal of anything: the goal
    // is simply not done yet, and the round cap and the budgets bound it instead.
    if (input.claimed !== false && judged.judgement!.rejectionsInARow >= this.config.maxRejections) {
      return this.stop(agent, judged, input.turn, BLOCK.judgeRejected, `The judge ${judge} refused the completion ${judged.judgement!.rejectionsInARow} times in a row. Last reasons: ${verdict.reasons.join(' ')}`)
    }
    return { stands: false, code: 'GOAL_JUDGE_REJECTED', message }
  }

  /** One judge call, bounded by the timeout; failures come back as text, never thrown. */
  private async ask(provider: ModelProvider, request: ModelRequest, outer: AbortSignal | undefined): Promise<Answer> {
    const timeout = AbortSignal.timeout(this.config.timeoutMs)
    const signal = outer ? AbortSignal.any([outer, timeout]) : timeout
    let text = ''
    let usage: Usage | undefined
    try {
      for await (const chunk of provider.stream(request, signal)) {
        if (chunk.type === 'text') text += chunk.text
        else if (chunk.type === 'usage') usage = chunk.usage
        else if (chunk.type === 'finish') {
          if (timeout.aborted) return { text, usage, error: `no answer within ${this.config.timeoutMs} ms` }
          if (chunk.reason === 'error') return { text, usage, error: `${chunk.error?.code ?? 'ERROR'}: ${chunk.error?.message ?? 'the call failed'}` }
          if (chunk.reason === 'max-tokens') return { text, usage, error: 'the answer was cut off at its token limit' }
          return { text, usage }
        }
      }
      return { text, usage, error: 'the answer ended without finishing' }
    } catch (error) {
      return { text, usage, error: timeout.aborted ? `no answer within ${this.config.timeoutMs} ms` : describeError(error) }
    }
  }

  /**
   * The judge's call counts against the goal's budgets like a model call of the round (when a meter is loaded:
   * without one nothing is counted). A budget it uses up stops the round, and the completion with it.
   */
  private count(agent: Agent, goal: GoalState, input: { turn: number; step: number }, usage: Usage | undefined, activeTimeMs: number): Review | undefined {
    const budget = this.ctx.get('goalBudget')
    if (budget) {
      const costUsd = budget.costOf(this.ctx.models.describe(this.config.model ?? agent.model), usage)
      this.ctx.goals.recordUsage(agent, { turn: input.turn, step: input.step, tokens: tokensOf(usage), costUsd, activeTimeMs }, { by: 'goal-judge' })
    }
    const live = this.ctx.goals.get(agent)
    if (live?.id === goal.id && live.revision === goal.revision && live.phase === 'active') return undefined
    return { stands: false, code: 'GOAL_JUDGE_STALE', message: `The completion was not judged: the goal changed while the judge was asked (it is now ${live?.phase ?? 'gone'}).` }
  }

  /** Blocks the goal with `code` (the round's way when this is a round, else directly) and tells the model why. */
  private stop(agent: Agent, goal: GoalState, turn: number, code: string, message: string): Review {
    const reason = { code, message }
    const blocked = this.ctx.goals.blockRound(agent, turn, reason, { by: 'goal-judge' })
    if (!blocked) {
      const live = this.ctx.goals.get(agent)
      if (live?.phase === 'active') this.ctx.goals.block(agent, live, reason)
    }
    return { stands: false, code: code === BLOCK.judgeFailed ? 'GOAL_JUDGE_FAILED' : 'GOAL_JUDGE_REJECTED', message: `The goal was not completed and is now blocked (${code}): ${message}` }
  }
}

/** What the model reads when the judge refuses: the reasons and what is missing, to work on in this round. */
export function refusal(judge: string, verdict: Verdict): string {
  return [
    `The goal was not completed: the judge (${judge}) answered "${verdict.verdict}".`,
    'Reasons:',
    ...verdict.reasons.map((reason) => `- ${reason}`),
    ...(verdict.missing.length ? ['Missing:', ...verdict.missing.map((item) => `- ${item}`)] : []),
    'Do what is missing, show it in the workspace, and call update_goal complete again.',
  ].join('\n')
}
