import type { CommandSandbox, SandboxStatus } from '@goalkeeper/sandbox'
import type { ToolCallContext, ToolCallReview } from '@goalkeeper/tools'
import type { PermissionMode } from './config.ts'

/** A call the mode does not let through on its own: a person may allow it. */
export interface PermissionRequest {
  readonly mode: PermissionMode
  readonly tool: string
  /** The arguments that will run (after every rewrite). */
  readonly arguments: Readonly<Record<string, unknown>>
  /** run_command's command line, to show as is. */
  readonly command?: string
  /** Why it is asked, in words for a person: `write_file changes files, which the read-only mode ...`. */
  readonly why: string
  readonly review: ToolCallReview
  /** Aborts when the turn is cancelled: stop asking then. */
  readonly signal: AbortSignal
}

/**
 * A person's answer. `session` allows this tool (for run_command: this exact command) for the rest of the
 * agent's life in this process; it is never written as authority a reopened session inherits. `by` names
 * where the person answered (`terminal`, `acp`).
 */
export type PermissionAnswer =
  | { kind: 'allow'; scope: 'once' | 'session'; by: string }
  | { kind: 'deny'; by: string; reason?: string }

/** What the permissions plugin says about itself, for a header line or `goalkeeper check`. */
export interface PermissionsDescription {
  mode: PermissionMode
  /** Sandboxed commands may use the network. */
  network: boolean
  sandbox: SandboxStatus
  /** One line for a person: the mode, what it allows, and how commands run. */
  summary: string
}

/** `ctx.permissions`, provided by the permissions plugin. */
export interface PermissionService {
  readonly mode: PermissionMode
  describe(): PermissionsDescription
  /** How a command of this call runs: as the user (`full`), in bubblewrap, or not at all (no sandbox here). */
  commandSandbox(call: Pick<ToolCallContext, 'agent'>): CommandSandbox
}

/** Session record of a call a person was asked about. */
export const PERMISSION_RECORD = 'permission/asked'
export interface PermissionRecord {
  turn: number
  step: number
  callId: string
  tool: string
  why: string
  answer: 'once' | 'session' | 'deny'
  by: string
}

/** Session record of a call waiting for a person's answer; the `permission/asked` record (or the call's result) ends the wait. */
export const PERMISSION_WAITING_RECORD = 'permission/waiting'
export interface PermissionWaitingRecord {
  turn: number
  step: number
  callId: string
  tool: string
  why: string
  /** run_command's command line, as it will run. */
  command?: string
}

declare module 'cordis' {
  interface Context {
    /** Permission modes, rules and asking a person (section 5). */
    permissions: PermissionService
  }
  interface Events {
    /**
     * A call needs a person's permission. The listener that can ask for this call's agent (a terminal,
     * an editor over ACP) returns the answer's promise; the others return undefined. No listener means
     * nobody is there: the call is denied.
     */
    'permissions/ask'(request: PermissionRequest): Promise<PermissionAnswer> | undefined
    /**
     * Isolated: a listener of `permissions/ask` took the question, so a call now waits for a person's answer.
     * For notifiers (a webhook, a hook, a desktop notification); not emitted when nobody can be asked.
     */
    'permissions/waiting'(request: PermissionRequest): void
  }
}

declare module '@goalkeeper/session' {
  interface RecordData {
    /** A person answered a permission question about one call. */
    'permission/asked': PermissionRecord
    /** A call waits for a person's answer (a listener of `permissions/ask` took the question). */
    'permission/waiting': PermissionWaitingRecord
  }
}
