import type { Context } from 'cordis'
import type { Agent, StepSummary } from '@goalkeeper/agent-loop'
import type { GoalChange } from '@goalkeeper/goal'
import { describeError, dispatchIsolated } from '@goalkeeper/kit'
import type { PermissionRequest } from '@goalkeeper/permissions'
import type { UserMessage } from '@goalkeeper/session'
import type { ToolAgent, ToolCallReport, ToolCallReview, ToolCallVerdict } from '@goalkeeper/tools'
import { HOOK_EVENTS } from './events.ts'
import { fromToolInput, toolInput, toolTarget } from './payload.ts'
import { type HookRun, type HookRuntime, isFailure } from './runtime.ts'
import { goalEventOf } from './goal-event.ts'

/** `source.name` of the messages hooks add (context, notes, continue reasons), and `by` of their denials. */
export const HOOKS_SOURCE = 'hooks'

/** goalkeeper's session-start sources in Claude Code's words (`fork` has no counterpart there). */
const SESSION_SOURCES = { new: 'startup', resume: 'resume', fork: 'fork' } as const

interface PendingContext {
  text: string
  /** The prompt it belongs to; absent for session-start context, which goes with the first turn. */
  message?: string
}

interface AgentState {
  /** Session-start hooks: the first prompt waits for their context. */
  starting: Promise<void>
  context: PendingContext[]
  /** Continues turn-end hooks asked for in the open turn. */
  continues: number
  /** After-call hooks still running: the next call and the next model call wait for them. */
  after: Promise<void>
  ended: boolean
}

const textOf = (message: UserMessage) => message.content.map((block) => ('text' in block ? block.text : '')).join('')
const label = (run: HookRun) => `${HOOK_EVENTS[run.hook.event]} hook "${run.hook.label}"`

/** The agent loop's events, each handed to the hooks of the matching event and answered as the contract says. */
export class HookListeners {
  private agents = new Map<ToolAgent, AgentState>()
  /** False from the start of the unload: a waterfall's listener list is fixed when it starts. */
  active = true

  constructor(private ctx: Context, private hooks: HookRuntime) {}

  /** A denial; its reason is recorded in the session and read by the model, so secrets are masked. */
  private deny(reason: string): ToolCallVerdict {
    return { kind: 'deny', by: HOOKS_SOURCE, reason: this.hooks.mask(reason) }
  }

  /** A plugin message into the agent's turn; hook output is masked like any text that reaches the session. */
  private steer(agent: Agent, text: string) {
    agent.steer({ content: this.hooks.mask(text), source: { kind: 'plugin', name: HOOKS_SOURCE } })
  }

  private state(agent: ToolAgent): AgentState {
    let state = this.agents.get(agent)
    if (!state) this.agents.set(agent, (state = { starting: Promise.resolve(), context: [], continues: 0, after: Promise.resolve(), ended: false }))
    return state
  }

  /** Knows the agent from its creation, so that it gets its session-end at unload. */
  track(agent: ToolAgent) {
    this.state(agent)
  }

  /** The loop's own agent behind a tool call's (cancel and turn live there). */
  private agentOf(agent: ToolAgent): Agent | undefined {
    return this.ctx.get('agents')?.get(agent.id)
  }

  /** A message the model reads at the next step of `turn`, if that turn is still open (a steer on an idle agent would start a turn). */
  private note(agent: ToolAgent, turn: number, text: string) {
    const live = this.agentOf(agent)
    if (!live || live.turn !== turn) {
      this.hooks.logger.warn('a hook note for turn %d of %s came after the turn ended and is dropped', turn, agent.id)
      return
    }
    this.steer(live, text)
  }

  /** `continue: false`: stop the turn as a person's Ctrl-C does (a goal round pauses its goal). */
  private stop(agent: ToolAgent, turn: number) {
    this.agentOf(agent)?.cancel('user', { turn })
  }

  sessionStart(agent: Agent, source: keyof typeof SESSION_SOURCES) {
    if (!this.active || !this.hooks.has('session-start')) return
    const state = this.state(agent)
    const value = SESSION_SOURCES[source] ?? source
    state.starting = this.hooks.run('session-start', { session: agent.session }, { source: value }, { value }).then((runs) => {
      for (const run of runs) if (run.answer.context) state.context.push({ text: `${label(run)} adds context:\n${run.answer.context}` })
    }, (error) => this.hooks.logger.error('session-start hooks failed: %s', describeError(error)))
  }

  async promptSubmit(agent: Agent, messages: UserMessage[]): Promise<{ messages: UserMessage[]; refused?: string }> {
    if (!this.active) return { messages }
    const state = this.state(agent)
    await state.starting
    if (!this.hooks.has('prompt-submit')) return { messages }
    const refusals: string[] = []
    let kept = messages
    // Human prompts only: a goal round's prompt is the driver's, and a plugin's message is not a prompt.
    for (const message of messages.filter((m) => m.source.kind === 'human')) {
      const runs = await this.hooks.run('prompt-submit', { session: agent.session }, { prompt: textOf(message) })
      const refusal = runs.find((run) => run.answer.block !== undefined || run.answer.stop !== undefined)
      if (refusal) {
        refusals.push(this.hooks.mask(`${label(refusal)}: ${refusal.answer.block ?? refusal.answer.stop}`))
        kept = kept.filter((m) => m !== message)
        continue
      }
      for (const run of runs) if (run.answer.context) state.context.push({ text: `${label(run)} adds context:\n${run.answer.context}`, message: message.id })
    }
    return refusals.length ? { messages: kept, refused: `refused by ${refusals.join('; ')}` } : { messages }
  }

  turnStart(agent: Agent, messages: UserMessage[]) {
    const state = this.agents.get(agent)
    if (!state) return
    state.continues = 0
    const admitted = new Set(messages.map((m) => m.id))
    const context = state.context.filter((c) => c.message === undefined || admitted.has(c.message))
    // Context of prompts that were not admitted goes with them.
    state.context = []
    if (context.length && this.active) this.steer(agent, context.map((c) => c.text).join('\n\n'))
  }

  async beforeCall(review: ToolCallReview): Promise<ToolCallVerdict | undefined> {
    if (!this.active) return undefined
    const { agent, turn, step, callId, cwd } = review.call
    await this.state(agent).after
    const target = toolTarget(review.name, review.tool, review.arguments)
    if (!this.hooks.matching('before-tool-call', target).length) return undefined
    const runs = await this.hooks.run('before-tool-call', { session: agent.session, cwd, turn, step, callId }, {
      tool_name: review.name,
      tool_input: toolInput(review.arguments, cwd),
      tool_use_id: callId,
    }, target)
    // Fail closed: a guard that could not answer must not let the call through.
    const failed = runs.find(isFailure)
    if (failed) return this.deny(`the ${label(failed)} failed (${failed.answer.problem}), and a before-call hook that fails refuses the call`)
    const stopped = runs.find((run) => run.answer.stop !== undefined)
    if (stopped) {
      this.stop(agent, turn)
      return this.deny(`the ${label(stopped)} stopped the agent: ${stopped.answer.stop}`)
    }
    const denied = runs.find((run) => run.answer.block !== undefined || run.answer.permission === 'deny')
    if (denied) return this.deny(denied.answer.block ?? denied.answer.permissionReason ?? `the ${label(denied)} denied the call`)
    for (const run of runs) {
      if (!run.answer.updatedInput) continue
      try {
        review.rewrite(fromToolInput(run.answer.updatedInput, review.arguments, review.tool, cwd), HOOKS_SOURCE, this.hooks.mask(run.answer.permissionReason ?? `rewritten by the ${label(run)}`))
      } catch (error) {
        return this.deny(`the ${label(run)} rewrote the arguments into ones ${review.name} does not take: ${describeError(error)}`)
      }
    }
    const context = runs.flatMap((run) => (run.answer.context ? [`${label(run)}: ${run.answer.context}`] : []))
    if (context.length) this.note(agent, turn, context.join('\n\n'))
    const ask = runs.find((run) => run.answer.permission === 'ask')
    return ask ? this.ask(review, ask) : undefined
  }

  /** `ask`: a person decides, through the same question the permission modes put (denied when nobody is there). */
  private async ask(review: ToolCallReview, run: HookRun): Promise<ToolCallVerdict | undefined> {
    const why = `the ${label(run)} asks a person${run.answer.permissionReason ? `: ${run.answer.permissionReason}` : ''}`
    const request: PermissionRequest = {
      mode: this.ctx.get('permissions')?.mode ?? 'full',
      tool: review.name,
      arguments: review.arguments,
      ...(review.name === 'run_command' && typeof review.arguments.command === 'string' ? { command: review.arguments.command } : {}),
      why,
      review,
      signal: review.call.signal,
    }
    const pending = this.ctx.bail('permissions/ask', request)
    if (!pending) return this.deny(`${why}, and nobody is there to answer (an unattended run denies such calls)`)
    dispatchIsolated(this.ctx, 'permissions/waiting', request)
    try {
      const answer = await pending
      if (answer?.kind === 'allow') return undefined
      return this.deny(answer?.kind === 'deny' && answer.reason ? answer.reason : `${why}, and the answer was no`)
    } catch (error) {
      return this.deny(`${why}, and asking failed (${describeError(error)})`)
    }
  }

  afterCall(report: ToolCallReport) {
    // Only calls that ran: an unknown tool, bad arguments or a denial never reached the tool.
    if (!this.active || !report.arguments || report.result.denied) return
    const target = toolTarget(report.name, this.ctx.get('tools')?.get(report.name), report.arguments)
    if (!this.hooks.matching('after-tool-call', target).length) return
    const { agent, turn, step, callId, cwd } = report.call
    const state = this.state(agent)
    const fields = {
      tool_name: report.name,
      tool_input: toolInput(report.arguments, cwd),
      tool_response: { ok: report.result.ok, content: report.result.content, ...(report.result.error ? { error: report.result.error } : {}) },
      tool_use_id: callId,
    }
    state.after = state.after.then(async () => {
      const runs = await this.hooks.run('after-tool-call', { session: agent.session, cwd, turn, step, callId }, fields, target)
      if (runs.some((run) => run.answer.stop !== undefined)) return this.stop(agent, turn)
      const notes = runs.flatMap((run) => [run.answer.block, run.answer.context].filter((text): text is string => !!text).map((text) => `${label(run)} on ${report.name} (${callId}): ${text}`))
      if (notes.length) this.note(agent, turn, notes.join('\n\n'))
    }).catch((error) => this.hooks.logger.error('after-call hooks failed: %s', describeError(error)))
  }

  /**
   * At the end of a step the model ended without tool calls (the turn is about to end `completed`): after-call
   * hooks are done, then turn-end hooks may make the turn go on, a bounded number of times. The reason is
   * steered into the turn, which then takes one more step.
   */
  async stepEnd(agent: Agent, turn: number, step: number, summary: StepSummary) {
    if (!this.active) return
    const state = this.state(agent)
    await state.after
    if (!this.hooks.has('turn-end') || summary.toolCalls.length || summary.finish !== 'stop' || summary.error) return
    const runs = await this.hooks.run('turn-end', { session: agent.session, turn, step }, {
      stop_hook_active: state.continues > 0,
      last_assistant_message: summary.text,
    })
    if (runs.some((run) => run.answer.stop !== undefined)) return
    const asks = runs.filter((run) => run.answer.block !== undefined)
    if (!asks.length || agent.turn !== turn || !this.active) return
    const limit = this.hooks.config.continueLimit
    if (state.continues >= limit) {
      this.hooks.logger.warn('turn %d of %s ends although %s asks to go on: turn-end hooks made it go on %d times (continueLimit)', turn, agent.id, label(asks[0]!), limit)
      return
    }
    // A goal round whose goal was stopped meanwhile is winding down; going on would only be cancelled.
    const goals = this.ctx.get('goals')
    if (goals?.roundOf(agent, turn) && goals.get(agent)?.phase !== 'active') return
    state.continues++
    const reasons = asks.map((run) => `${label(run)}: ${run.answer.block}`).join('\n')
    this.steer(agent, `Not done yet: a turn-end hook asks you to go on (${state.continues} of at most ${limit}).\n${reasons}`)
  }

  async beforeCompact(agent: Agent, reason: string, turn: number) {
    if (!this.active) return
    const trigger = reason === 'request' ? 'manual' : 'auto'
    await this.hooks.run('before-compact', { session: agent.session, turn }, { trigger, custom_instructions: '' }, { value: trigger })
  }

  needsInput(request: PermissionRequest) {
    if (!this.active) return
    const { agent, turn, step, callId } = request.review.call
    this.hooks.fire('needs-input', { session: agent.session, turn, step, callId }, {
      message: `goalkeeper needs your permission to use ${request.tool}`,
      notification_type: 'permission_prompt',
      tool_name: request.tool,
      why: request.why,
    }, { value: 'permission_prompt' })
  }

  goalChanged(agent: Agent, change: GoalChange) {
    if (!this.active) return
    const goalEvent = goalEventOf(change)
    this.hooks.fire('goal-changed', { session: agent.session }, { goal_event: goalEvent, goal: change.goal ?? change.previous ?? null }, { value: goalEvent })
  }

  sessionEnd(agent: ToolAgent, reason: 'exit' | 'other'): Promise<unknown> {
    const state = this.state(agent)
    if (state.ended) return Promise.resolve()
    state.ended = true
    this.agents.delete(agent)
    return this.hooks.run('session-end', { session: agent.session }, { reason }, { value: reason })
  }

  /** At unload: session-end for every agent still live (the process is going away). */
  async endAll() {
    await Promise.allSettled([...this.agents.keys()].map((agent) => this.sessionEnd(agent, 'exit')))
  }
}
