import type { Context } from 'cordis'
import { MAX_CHECK_OUTPUT, type GoalCheckRecord, type GoalState } from '@goalkeeper/goal'
import { describeError, tail } from '@goalkeeper/kit'
import type { ToolCallContext } from '@goalkeeper/tools'

/** How the goal's check went: every command passed, or the first that did not. */
export type CheckOutcome = { ok: true; record: GoalCheckRecord; runs: GoalCheckRecord[] } | { ok: false; record: GoalCheckRecord; why: string; runs: GoalCheckRecord[] }

/**
 * Runs the goal's check commands, in order, through the registered `run_command` tool, so a check gets
 * exactly what a model's command gets: confinement to the workspace, the environment scrubbed of secrets,
 * secrets masked in the output, the timeout, and the `tool/before-call` review. Stops at the first failure.
 */
export async function runCheck(ctx: Context, call: ToolCallContext, goal: GoalState, timeoutMs: number): Promise<CheckOutcome> {
  const commands = goal.verify ?? []
  const runs: GoalCheckRecord[] = []
  for (const [index, command] of commands.entries()) {
    if (!ctx.tools.get('run_command')) {
      const record = { goalId: goal.id, command, ok: false, exitCode: null, output: '' }
      return { ok: false, record, runs: [...runs, record], why: 'the run_command tool is not loaded, so the check cannot run (load workspace-tools with allowCommands)' }
    }
    let result
    try {
      result = await ctx.tools.execute(
        { id: `${call.callId}.check-${index + 1}`, name: 'run_command', arguments: JSON.stringify({ command, timeout_ms: timeoutMs }) },
        { agent: call.agent, turn: call.turn, step: call.step, signal: call.signal, turnSources: call.turnSources, cwd: call.cwd },
      )
    } catch (error) {
      result = { ok: false, content: '', error: { code: 'TOOL_FAILED', message: describeError(error) } }
    }
    const record: GoalCheckRecord = { goalId: goal.id, command, ok: result.ok, exitCode: exitCodeOf(result.content), output: tail(result.content, MAX_CHECK_OUTPUT) }
    runs.push(record)
    if (!result.ok) return { ok: false, record, runs, why: result.error?.message ?? 'the command failed' }
  }
  return { ok: true, record: runs.at(-1)!, runs }
}

/**
 * The exit code run_command reports on its last line, "[Exit code N after S s.]", or null for a timeout, a
 * kill or a signal. In a sandbox that line goes on with a note ("after S s; in the sandbox: ...") before the
 * bracket closes, so only its start is matched: a passing sandboxed check was recorded with null before.
 */
export function exitCodeOf(content: string): number | null {
  const last = content.trimEnd().split('\n').at(-1) ?? ''
  const exit = /^\[Exit code (-?\d+) after [\d.]+ s[.;]/.exec(last)
  return exit ? Number(exit[1]) : null
}

/** What the model reads when its completion is refused: the command, how it ended, the output's tail. */
export function refusedCompletion(outcome: Extract<CheckOutcome, { ok: false }>): string {
  const { record } = outcome
  const how = record.exitCode === null ? outcome.why : `It exited with code ${record.exitCode}.`
  return [
    `The goal was not completed: its check \`${record.command}\` failed. ${how}`,
    record.output ? `End of its output:\n${record.output}` : '',
    'Fix what it reports, run the check yourself, and call update_goal complete again when it passes.',
  ].filter(Boolean).join('\n')
}
