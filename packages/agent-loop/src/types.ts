import type { ContentBlock, ContextCompactionData, MessageSource, Session, ToolErrorInfo, TurnOutcome, UserMessage } from '@goalkeeper/session'
import type { FinishReason, ModelError, OutputSchema } from '@goalkeeper/model'
import type { ToolAgent, ToolResult } from '@goalkeeper/tools'

export type CancelReason = 'user' | 'parent' | 'shutdown' | 'policy'
export type AgentStatus = 'idle' | 'running'

/** What `send`/`steer` accept; `content` may be a plain string. `source` defaults to human (send) or must be given (steer). */
export interface MessageInput {
  id?: string
  content: ContentBlock[] | string
  source?: MessageSource
}

export interface Agent extends ToolAgent {
  readonly id: string
  readonly session: Session
  /** Provider name in ctx.models. */
  readonly model: string
  readonly status: AgentStatus
  /** The inbox, read-only, in send order. */
  readonly queued: readonly UserMessage[]
  /** Number of the open turn, or undefined. */
  readonly turn: number | undefined
  readonly disposed: boolean
  /** Appends `input/queued`, emits `agent/queued` synchronously, returns the recorded message. */
  send(message: MessageInput): UserMessage
  /** Adds a plugin-sourced message to the next step of the running turn (or the next batch when idle); other sources throw. */
  steer(message: MessageInput): UserMessage
  /**
   * Takes the inbox as a batch in a later macrotask if it is not empty (returns whether work is pending).
   * `resume` restores human inputs without waking the agent; this runs them without sending a new prompt.
   */
  wake(): boolean
  /**
   * Asks the open turn `turn` to end at its next step boundary: the step under way finishes (its model call,
   * its tool calls, `agent/step-end`), no further model call is made, and the turn ends
   * `{ kind: 'preempted', cause }`. The inbox is untouched. Returns false when that turn is not open, or is
   * already stopping or yielding.
   */
  preempt(turn: number, cause: string): boolean
  /**
   * Winds the open turn `turn` down after a stop (a goal blocked or completed from inside its round): from
   * `options.fromStep` (default: the step under way) no tool call of the turn runs; each is answered with a
   * denied result (`tool/result { ok: false, error: DENIED, denied: { by, reason } }`) the model reads.
   * The turn makes at most `options.modelCalls` (0 or 1, default 0) more model calls: 0 ends it at its next
   * step boundary, 1 leaves one wrap-up step that can only answer in text. A turn that would go on past that
   * ends as `cancel('policy', { turn })` ends it. Called again, the stricter bounds hold. Returns false when
   * that turn is not open or already stopping.
   */
  wrapUp(turn: number, options: WrapUpOptions): boolean
  /** Returns true when the cancel was effective. */
  cancel(reason: CancelReason, options?: { turn?: number }): boolean
  whenIdle(): Promise<void>
  /**
   * Compacts the history now, as before a model call but whatever the threshold (reason `request`; without a
   * known window it aims at half the current request). Only an idle agent compacts; meanwhile its status is
   * `running`, new input waits, and a cancel or dispose stops the compaction.
   */
  compact(): Promise<CompactionResult>
  dispose(): Promise<void>
}

export interface WrapUpOptions {
  /** Who stopped the turn: `denied.by` of the refused calls. */
  by: string
  /** Why, as the model reads it in each refused call's result. */
  reason: string
  /** Model calls the turn may still make after the step under way: 0 (default) or 1 (a text-only wrap-up). */
  modelCalls?: 0 | 1
  /** The first step whose tool calls are refused (default: the step under way, so calls not yet run are refused). */
  fromStep?: number
}

export interface Submission {
  /** The batch; listeners may remove messages before `await next()`. */
  messages: UserMessage[]
}

export type PromptDecision =
  | { kind: 'submit'; messages: UserMessage[] }
  | { kind: 'reject'; reason: string }

export interface ToolCallInfo {
  turn: number
  step: number
  callId: string
  name: string
  arguments: string
}

export interface ToolCallSummary extends ToolCallInfo {
  ok: boolean
  content: string
  error?: ToolErrorInfo
}

export interface StepSummary {
  turn: number
  step: number
  text: string
  toolCalls: ToolCallSummary[]
  succeeded: number
  failed: number
  finish: FinishReason
  error?: ModelError
}

/** A compaction about to be recorded, as `agent/compact` listeners see it. `summary` is the text that replaces the history. */
export interface CompactionProposal {
  turn: number
  step: number
  reason: ContextCompactionData['reason']
  method: ContextCompactionData['method']
  summary: string
  /** How many messages the summary stands for. */
  replaced: number
  tokensBefore: number
  tokensAfter: number
  contextWindow: number
}

/** How a compaction went: recorded, nothing done (and why), or ended by a usage limit of the summary call. */
export type CompactionResult =
  | { kind: 'compacted'; data: ContextCompactionData }
  | { kind: 'unchanged'; why: string }
  /** The summary call hit a usage limit (RATE_LIMIT, QUOTA): a turn ends with it; a compaction never starts another. */
  | { kind: 'failed'; error: ModelError }

/** `accept` with the summary to record (replacing it makes the method `policy`), or `veto`: the history stays whole. */
export type CompactionDecision = { kind: 'accept'; summary: string } | { kind: 'veto'; reason: string }

export interface AgentErrorInfo {
  code: string
  message: string
  cause?: unknown
}

export interface CreateAgentOptions {
  /** An open, writable session; a new one is created when absent. */
  session?: Session
  /** Working directory recorded in a new session's header (default: process.cwd()). */
  cwd?: string
  /** Provider name in ctx.models; default: the first registered name of the agent-loop config's `model` preference list. */
  model?: string
  /** Provider-specific model id passed through in the request. */
  modelId?: string
  system?: string
  /** Tool names offered to the model (default: every registered tool). */
  tools?: string[]
  maxTokens?: number
  /** Safety bound on steps in one turn (default 64); reaching it ends the turn with error `MAX_STEPS`. */
  maxSteps?: number
  /**
   * Every model call of the agent's turns asks for text answers in this schema (`request.outputSchema`;
   * compaction's summary call does not). Checking the answer is the caller's part.
   */
  outputSchema?: OutputSchema
}

export interface AgentService {
  create(options: CreateAgentOptions): Promise<Agent>
  get(id: string): Agent | undefined
  list(): Agent[]
  /** The provider an agent created without `model` would use now (the first registered of the config's `model` list). */
  defaultModel(): string | undefined
  /** Opens the session for writing (repairing a crash), restores human inputs, emits `agent/session-start` with `resume`. */
  resume(sessionId: string, options?: Omit<CreateAgentOptions, 'session' | 'cwd'>): Promise<Agent>
  /** Forks the session up to `uptoSeq` and starts an agent on the fork (`agent/session-start` with `fork`). */
  fork(sessionId: string, uptoSeq: number, options?: Omit<CreateAgentOptions, 'session' | 'cwd'>): Promise<Agent>
}

declare module 'cordis' {
  interface Context {
    /** Agents, their inbox and their turns (section 6). */
    agents: AgentService
  }
  interface Events {
    /** Isolated: an agent joined the registry. */
    'agent/created'(agent: Agent): void
    /** Isolated: an agent left the registry, quiescent. */
    'agent/disposed'(agent: Agent): void
    /** Isolated, after `agent/created`: where its session came from. */
    'agent/session-start'(agent: Agent, source: 'new' | 'resume' | 'fork'): void
    /** Isolated: idle <-> running. */
    'agent/status'(agent: Agent, status: AgentStatus): void
    /** Isolated, inside `send`, after `input/queued`. */
    'agent/queued'(agent: Agent, message: UserMessage): void
    /** Waterfall before a turn can open: listeners drop messages or reject the batch. */
    'agent/prompt-submit'(agent: Agent, submission: Submission, next: () => Promise<PromptDecision>): Promise<PromptDecision>
    /** Isolated: an effective cancel, before anything is removed. */
    'agent/cancel-requested'(agent: Agent, reason: CancelReason): void
    /**
     * Extension: synchronous veto on each admitted message, right before `turn/start` is written, in the
     * same tick as its `user/message` record (nothing can interleave). Return a reason string to veto the
     * message (`input/rejected` with that reason); a throwing listener vetoes it too.
     */
    'agent/admit'(agent: Agent, message: UserMessage): string | undefined | void
    /** Isolated, after the turn's `user/message` records. */
    'agent/turn-start'(agent: Agent, turn: number, messages: UserMessage[]): void
    /** Isolated, before each tool execution. */
    'agent/tool-start'(agent: Agent, call: ToolCallInfo): void
    /** Isolated, after each tool execution. */
    'agent/tool-end'(agent: Agent, call: ToolCallInfo, result: ToolResult): void
    /** Parallel and awaited, after `step/end` and before the next model call: where policy plugins act. */
    'agent/step-end'(agent: Agent, turn: number, step: number, summary: StepSummary): void | Promise<void>
    /** Isolated, after `turn/end` and before the flush. */
    'agent/turn-end'(agent: Agent, turn: number, outcome: TurnOutcome): void
    /** Isolated: a non-abort failure (model error, rejected batch, `FLUSH_FAILED`). */
    'agent/error'(agent: Agent, turn: number | undefined, error: AgentErrorInfo): void
    /** Extension: before each model call, listeners push sections of the system prompt (sync, isolated). */
    'agent/system-prompt'(agent: Agent, parts: string[]): void
    /**
     * Extension: a compaction of the history is proposed (waterfall). Return `await next()` to let it
     * through, `{ kind: 'accept', summary }` to record another summary, or `{ kind: 'veto', reason }`.
     */
    'agent/compact'(agent: Agent, proposal: CompactionProposal, next: () => Promise<CompactionDecision>): Promise<CompactionDecision>
    /** Extension: a `context/compacted` record was appended (isolated). */
    'agent/compacted'(agent: Agent, compaction: ContextCompactionData): void
    /** Extension: streamed assistant text as it arrives (isolated), for hosts that show progress. */
    'agent/text-delta'(agent: Agent, turn: number, step: number, text: string): void
    /** Extension: streamed reasoning as it arrives (isolated), where the provider streams it; the whole is in `assistant/message.reasoning`. */
    'agent/reasoning-delta'(agent: Agent, turn: number, step: number, text: string): void
  }
}
