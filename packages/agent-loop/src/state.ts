import type { Context, Logger } from 'cordis'
import type { MessageSource, SessionService, TurnOutcome, UserMessage } from '@goalkeeper/session'
import type { ModelService } from '@goalkeeper/model'
import type { ToolService } from '@goalkeeper/tools'
import type { Config } from './config.ts'

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
  /** The agent created or opened the session itself, so it closes it on dispose. */
  ownsSession: boolean
}

/** The open turn. */
export interface TurnState {
  turn: number
  controller: AbortController
  /** Set once by cancel or dispose; the turn ends with this outcome. */
  stop?: TurnOutcome
  /** Sources of the user messages admitted so far, steered ones included (authority checks). */
  sources: MessageSource[]
  /** Steered messages waiting for the next step. */
  steered: UserMessage[]
}

/** A batch taken from the inbox whose turn has not opened yet (under `agent/prompt-submit`, then `agent/admit`). */
export interface PendingDecision {
  /** Messages of the batch not yet rejected: the whole batch, then only the admitted ones. */
  batch: UserMessage[]
  /** Cancel or dispose already settled the batch; the decision is ignored. */
  void: boolean
}
