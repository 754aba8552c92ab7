import type { MessageSource, Session, ToolErrorInfo, UserMessage } from '@goalkeeper/session'
import type { ToolCall, ToolSchema } from '@goalkeeper/model'
import type { Validator } from './schema.ts'

/**
 * The part of an agent a tool may use. `@goalkeeper/agent-loop`'s `Agent` satisfies it;
 * kept structural here so the tool registry does not depend on the agent loop.
 */
export interface ToolAgent {
  readonly id: string
  readonly session: Session
  steer(message: { id?: string; content: UserMessage['content'] | string; source?: MessageSource }): UserMessage
}

export interface ToolCallContext {
  agent: ToolAgent
  turn: number
  step: number
  callId: string
  signal: AbortSignal
  /** Sources of the user messages admitted in the current turn (authority checks). */
  turnSources: readonly MessageSource[]
  /** Workspace root of the agent (its session cwd). */
  cwd: string
}

export interface ToolResult {
  ok: boolean
  content: string
  error?: ToolErrorInfo
}

export interface ToolDefinition<A = any> {
  name: string
  description: string
  /** JSON Schema (draft 2020-12 subset supported by ajv) of the arguments object. */
  parameters: Record<string, unknown>
  /** A string result is `{ ok: true, content }`. Throwing an Error with a string `code` gives that error code. */
  execute(args: A, call: ToolCallContext): string | ToolResult | Promise<string | ToolResult>
}

export interface ToolService {
  /** Registers a tool (an effect). Throws if the name is taken or the schema does not compile. */
  register<A = any>(tool: ToolDefinition<A>): () => void
  get(name: string): ToolDefinition | undefined
  list(): ToolDefinition[]
  /** Schemas for the model; `names` restricts and orders them (unknown names skipped). */
  schemas(names?: readonly string[]): ToolSchema[]
  /** Parses, validates and runs one call; never throws. */
  execute(call: ToolCall, context: Omit<ToolCallContext, 'callId'>): Promise<ToolResult>
}

/** A registered tool as the pipeline runs it. Internal: `index.ts` does not export it. */
export interface Entry {
  tool: ToolDefinition
  /** The schema as registered (a private copy), also the key to remove it from the compiler. */
  parameters: Record<string, unknown>
  validate: Validator
}
