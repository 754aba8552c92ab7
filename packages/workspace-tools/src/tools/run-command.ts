import { lstat, mkdir } from 'node:fs/promises'
import { clip } from '@goalkeeper/kit'
import { sandboxedCommand } from '@goalkeeper/sandbox'
import type { ToolCallContext, ToolDefinition, ToolResult } from '@goalkeeper/tools'
import { WorkspaceError } from '../errors.ts'
import { printable } from '../text.ts'
import { runShell, type ShellResult } from '../process.ts'
import { commandEnv } from '../secrets.ts'
import { openDirectory } from '../walk.ts'
import { within } from '../paths.ts'
import type { Located, Workspace } from '../workspace.ts'
import { text } from './shown.ts'

interface Args { command: string; cwd?: string; timeout_ms?: number }

/** What the model reads: control bytes made visible, binary output flagged. */
function presentOutput(result: ShellResult): string {
  const { text, replaced } = printable(result.output)
  const body = text || '(no output)'
  const note = result.binary || replaced ? `${body.endsWith('\n') ? '' : '\n'}[The output contains binary data; bytes that are not text are shown as \uFFFD.]` : ''
  return body + note
}

function describeEnd(result: ShellResult, timeoutMs: number, sandboxNote: string): string {
  const seconds = (result.durationMs / 1000).toFixed(1)
  if (result.killed === 'timeout') return `[Timed out after ${timeoutMs} ms; the command and its child processes were killed.]`
  if (result.killed) return `[Stopped (${result.killed}) after ${seconds} s; the command and its child processes were killed.]`
  if (result.exitSignal) return `[Killed by signal ${result.exitSignal} after ${seconds} s${sandboxNote}.]`
  return `[Exit code ${result.exitCode} after ${seconds} s${sandboxNote}.]`
}

/** Told with every sandboxed result, so that a failed write outside or a failed download is understood. */
const sandboxNote = (network: boolean) => `; in the sandbox: files are writable only inside the workspace and /tmp${network ? '' : ', and there is no network'}`

/**
 * The sandbox wrapper for this call, or undefined to run as the user. A mode that wants a sandbox this
 * machine cannot give refuses the command rather than run it unconfined.
 */
async function sandboxFor(ws: Workspace, call: ToolCallContext, target: Located) {
  const sandbox = ws.commandSandbox(call)
  if (sandbox.kind === 'none') return undefined
  if (sandbox.kind === 'unavailable') {
    throw new WorkspaceError('SANDBOX_UNAVAILABLE', `Commands may only run in a sandbox here, and none is available: ${sandbox.reason}. `
      + 'The file tools still work; ask the user to install the sandbox or to choose the full permission mode.')
  }
  // The store must exist to be mounted read-only over the workspace; a missing one would be created writable.
  for (const store of target.stores) await mkdir(store, { recursive: true })
  const policy = { bwrap: sandbox.bwrap, writable: [target.root], readOnly: target.stores, hidden: await hiddenKeys(target), network: sandbox.network, cwd: target.real }
  return { wrap: (argv: string[]) => sandboxedCommand(policy, argv), note: sandboxNote(sandbox.network) }
}

/**
 * The key's places a sandboxed command must not read, even outside the workspace (everything the user can
 * read is readable there): each key directory, made if missing (as the key's first use would, 0700) so that
 * a command cannot plant a key of its own there, and each key file outside those directories.
 */
async function hiddenKeys(target: Located) {
  const hidden = []
  for (const dir of target.keyDirs) {
    // One this user cannot make, a command of this user cannot make either.
    if (await mkdir(dir, { recursive: true, mode: 0o700 }).then(() => true, () => false)) hidden.push({ path: dir, directory: true })
  }
  for (const file of target.keyFiles) {
    if (target.keyDirs.some((dir) => within(file, dir))) continue
    if ((await lstat(file).catch(() => undefined))?.isFile()) hidden.push({ path: file, directory: false })
  }
  return hidden
}

export function runCommandTool(ws: Workspace, running: Set<{ stop(): Promise<void> }>): ToolDefinition<Args> {
  const { commandTimeoutMs, maxCommandTimeoutMs, maxOutputChars } = ws.limits
  return {
    name: 'run_command',
    kind: 'execute',
    title: (args) => `Run ${clip(text(args.command) ?? '', 120)}`,
    description: 'Run a shell command with /bin/sh -c in the workspace (or a subdirectory given as cwd). There is no stdin '
      + `and no terminal. Default timeout ${commandTimeoutMs} ms (timeout_ms raises it, up to ${maxCommandTimeoutMs} ms); `
      + 'on timeout the command and its children are killed. stdout and stderr are returned together, capped at '
      + `${maxOutputChars} characters (the middle is cut). A non-zero exit code is reported as a failure with the output.`,
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', minLength: 1, description: 'The shell command line.' },
        cwd: { type: 'string', description: 'Working directory relative to the workspace root (default: the root).' },
        timeout_ms: { type: 'integer', minimum: 1, description: `Timeout in milliseconds (default ${commandTimeoutMs}, at most ${maxCommandTimeoutMs}).` },
      },
      required: ['command'],
      additionalProperties: false,
    },
    async execute(args, call): Promise<ToolResult> {
      if (args.command.includes('\0')) throw new WorkspaceError('INVALID_COMMAND', 'The command contains a NUL character, which no shell command can hold. Remove it.')
      const target = await ws.resolve(call, args.cwd ?? '.')
      const sandbox = await sandboxFor(ws, call, target)
      const dir = await openDirectory(target, `cwd "${target.shown}" is not a directory.`)
      const timeoutMs = Math.min(args.timeout_ms ?? commandTimeoutMs, maxCommandTimeoutMs)
      const env = commandEnv(ws.scrubSecrets)
      // The shell starts in the directory the walk holds (its descriptor path), not wherever the path leads by then.
      const result = await runShell(args.command, { cwd: dir.self, timeoutMs, signal: call.signal, maxOutputChars, env, running, wrap: sandbox?.wrap })
        .finally(() => dir.close())
      const output = presentOutput(result)
      const content = `${output}${output.endsWith('\n') ? '' : '\n'}${describeEnd(result, timeoutMs, sandbox?.note ?? '')}`
      if (result.killed === 'timeout') return { ok: false, content, error: { code: 'COMMAND_TIMEOUT', message: `The command timed out after ${timeoutMs} ms.` } }
      if (result.killed) return { ok: false, content, error: { code: 'ABORTED', message: 'The command was stopped before it finished.' } }
      if (result.exitCode !== 0) {
        const how = result.exitSignal ? `was killed by ${result.exitSignal}` : `exited with code ${result.exitCode}`
        return { ok: false, content, error: { code: 'COMMAND_FAILED', message: `The command ${how}.` } }
      }
      return { ok: true, content }
    },
  }
}
