import type { Context, Logger } from 'cordis'
import type { SessionService, UserMessage } from '@goalkeeper/session'
import type { ModelService, OutputSchema } from '@goalkeeper/model'
import type { ToolService } from '@goalkeeper/tools'
import type { Config } from './config.ts'
import type { History } from './history.ts'
import type { Agent } from './types.ts'

/** What every agent of one plugin instance shares. Services are captured once so teardown can still use them. */
export interface LoopHost {
  ctx: Context
  sessions: SessionService
  models: ModelService
  tools: ToolService
  config: Config
  logger: Logger
  /** Called once an agent is fully disposed. */
  forget(id: string): void
}

/** Per-agent settings fixed at creation. */
export interface AgentSettings {
  system?: string
  /** Tool names offered to the model; undefined offers every registered tool. */
  tools?: string[]
  maxTokens?: number
  maxSteps: number
  modelId?: string
  outputSchema?: OutputSchema
  /** The agent created or opened the session itself, so it closes it on dispose. */
  ownsSession: boolean
}

/**
 * The agent as its turn, its admission steps and its requests see it: the public face (what listeners and
 * tools get) plus the parts they read. They never reach into the agent's own state, which only agent.ts changes.
 */
export interface AgentCore extends Agent {
  readonly host: LoopHost
  readonly settings: AgentSettings
  readonly history: History
  /**
   * Effective context limits learned from "too long" refusals, in estimated tokens, per provider and model
   * (compaction.ts): they narrow the configured window for the rest of the agent's life.
   */
  readonly contextLimits: Map<string, number>
  /** A compaction was recorded: a checkpoint follows at the end of its turn (at once when no turn is open). */
  checkpointWanted: boolean
  checkpointIfDue(): void
}

/** A batch taken from the inbox whose turn has not opened yet (under `agent/prompt-submit`, then `agent/admit`). */
export interface PendingDecision {
  /** Messages of the batch not yet rejected: the whole batch, then only the admitted ones. */
  batch: UserMessage[]
  /** Cancel or dispose already settled the batch; the decision is ignored. */
  abandoned: boolean
}
