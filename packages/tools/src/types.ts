import type { MessageSource, Session, ToolDenialInfo, ToolErrorInfo, ToolRewriteInfo, UserMessage } from '@goalkeeper/session'
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
  /**
   * Set by the pipeline only (a tool's own result never carries it): a `tool/before-call` listener denied
   * the call, and `error.code` is `DENIED`.
   */
  denied?: ToolDenialInfo
  /** Set by the pipeline only: how `tool/before-call` listeners rewrote the arguments, in order. */
  rewrites?: ToolRewriteInfo[]
}

/**
 * One validated call about to run, as `tool/before-call` listeners see it. `original` and `arguments` are
 * frozen: a listener changes what runs only through `rewrite`, so every change is recorded.
 */
export interface ToolCallReview {
  /** The tool's name (also `tool.name`). */
  readonly name: string
  /** The tool as registered: its description and schema, for listeners that judge by them. */
  readonly tool: ToolDefinition
  /** Who calls and where: agent, turn, step, callId, signal (aborted when the turn is cancelled), turnSources, cwd. */
  readonly call: ToolCallContext
  /** The arguments as the model sent them, parsed and checked against the schema (declared defaults filled in). */
  readonly original: Readonly<Record<string, unknown>>
  /** The arguments the tool will get: `original` until a listener rewrites them. */
  readonly arguments: Readonly<Record<string, unknown>>
  /** The rewrites so far, in order. */
  readonly rewrites: readonly ToolRewriteInfo[]
  /**
   * Replaces the arguments of this one call; `by` (the plugin's name) and `reason` are recorded with the
   * result. The new arguments are checked against the tool's schema at once: invalid ones throw, and a
   * listener that lets that escape denies the call. Allowed only before `next()` is called.
   */
  rewrite(args: Record<string, unknown>, by: string, reason?: string): void
}

/**
 * What a `tool/before-call` listener returns. `allow` means "no objection": it is what `next()` resolves to
 * when every listener inside agreed, and a listener returns it only by passing on `await next()`.
 */
export type ToolCallVerdict =
  | { kind: 'allow' }
  | { kind: 'deny'; by: string; reason: string }

/** What `tool/after-call` observers get: one call that went through the pipeline, and its result. */
export interface ToolCallReport {
  readonly name: string
  readonly call: ToolCallContext
  /** The arguments the tool ran with (after rewrites); undefined when the call never got that far (unknown tool, bad JSON or arguments). */
  readonly arguments?: Readonly<Record<string, unknown>>
  /** The result as the caller gets it (capped; with `denied` and `rewrites` when they happened). */
  readonly result: ToolResult
}

/**
 * What a tool does, as the tool says of itself: `read` and `search` look at the workspace, `edit` changes
 * files in it, `execute` runs commands, `session` works on the session itself (its goal), `other` is
 * anything else. The permission modes, front ends (ACP) and the policy defaults go by it.
 */
export const TOOL_KINDS = ['read', 'edit', 'execute', 'search', 'session', 'other'] as const
export type ToolKind = (typeof TOOL_KINDS)[number]

/** A file a call touches, as the model named it: relative to the call's `cwd`, or absolute. */
export interface ToolLocation {
  path: string
  /** 1-based line, when the call is about one place in the file. */
  line?: number
}

/** A file change a successful call made, for front ends that show it in place. `oldText` is null for a new file. */
export interface ToolDiff {
  path: string
  oldText: string | null
  newText: string
}

export interface ToolDefinition<A = any> {
  name: string
  description: string
  /** JSON Schema (draft 2020-12 subset supported by ajv) of the arguments object. */
  parameters: Record<string, unknown>
  /** What the tool does; a tool without one is `other` (`kindOf`). */
  kind?: ToolKind
  /**
   * Its calls change nothing (MCP's `readOnlyHint`). Implied by the `read` and `search` kinds; a `session`
   * tool that only reports (the goal's status) says so, so that calling it does not pass for progress.
   */
  readOnly?: boolean
  /** A short line for a person about one call (`Read src/a.ts`); front ends fall back to the name and arguments. */
  title?(args: A): string
  /** The files one call touches, for front ends that follow along. */
  locations?(args: A): ToolLocation[]
  /** The change a successful call made to one file, when the tool can tell it from its arguments and result. */
  diff?(args: A, result: ToolResult): ToolDiff | undefined
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
  /** A frozen copy of the schema, what `schemas()` hands to every model call. */
  advertised: Readonly<Record<string, unknown>>
  validate: Validator
}
