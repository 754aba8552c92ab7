import { ControlUnavailable } from '@goalkeeper/control'
import { type CommandContext, defineCommand, joinWords } from '../command.ts'
import { HostError } from '../errors.ts'
import { ExitCode } from '../exit-codes.ts'
import { EXIT_CODE_HELP } from './render/outcome.ts'
import { continuationHint, reportResult } from './render/result.ts'
import { controlChannel } from './lookup/controls.ts'
import { databaseEnv } from './lookup/database.ts'
import { sendCliControl } from './pause.ts'
import { AgentRun } from './run/agent-run.ts'
import { prepareLastMessage, withOutputLastMessage, type LastMessageOptions } from './run/last-message.ts'

export interface ResumeOptions extends LastMessageOptions {
  acceptTruncation?: boolean
  database?: string
  last?: boolean
  continue?: boolean
}

export default defineCommand<ResumeOptions>({
  name: 'resume',
  description: 'continue a saved session: run its unanswered inputs, then the prompt if one is given',
  configure: (command) =>
    withOutputLastMessage(command)
      .argument('[id]', 'the session (its id, or an unambiguous part of it; see `goalkeeper sessions`); none with --last')
      .argument('[prompt...]', 'a new prompt for the session')
      .option('--last', 'the most recent session of this project (every word is then the prompt)')
      .option('--continue', 'the same as --last')
      .option('--accept-truncation', 'continue a session whose end was cut off (see show): its lost records stay lost, and the log records that you accepted it')
      .option('--database <url>', 'continue a session kept in this PostgreSQL database (its writer lease keeps other machines out meanwhile)')
      .addHelpText('after', `
A goal found in the session is loaded disarmed; resume it with \`goalkeeper goal --session <id>\`.
A session another process holds open (a running goal, chat or acp with the control plugin) is not
opened here: that process is sent a resume control for its goal instead (exit 8 refused, 9 held by no
process, 10 its process gone). With --database, the paused goal of a fleet job is put back in the queue.
${EXIT_CODE_HELP}`),
  async run(cli, [id, words], options) {
    const last = !!(options.last || options.continue)
    if (!last && id === undefined) throw new HostError('resume needs the session: its id, or --last', { hint: 'goalkeeper sessions lists them' })
    // With --last there is no id: the first word is the prompt's.
    const prompt = joinWords(last && id !== undefined ? [String(id), ...(words as string[])] : words)
    if (!last && !prompt && options.database !== undefined && await fleetPaused(cli, String(id), options.database)) {
      return sendCliControl(cli, { session: String(id), source: 'cli', action: 'resume' }, options.database)
    }
    let run: AgentRun
    try {
      run = await AgentRun.open(cli, { ...(last ? { last } : { session: String(id) }), purpose: 'resume', acceptTruncation: !!options.acceptTruncation, ...databaseEnv(options.database), lastMessageFile: prepareLastMessage(cli.globals.cwd, options.outputLastMessage) })
    } catch (error) {
      return resumeHeld(cli, error, prompt, options.database)
    }
    // send wakes the agent; restored inputs join the same batch, ahead of the prompt.
    if (prompt) run.agent.send({ content: prompt })
    else if (!run.agent.wake()) {
      run.term.note('nothing to run: the session has no unanswered input (give a prompt to continue it)')
      continuationHint(run, run.goal())
      return run.finish(ExitCode.OK)
    }
    return reportResult(run, await run.untilRest(), { goal: false })
  },
})

/**
 * A session held live by another process (its lock refused this one) gets a resume control for its goal,
 * instead of a refusal as locked; without a prompt only (a prompt is for a session this command opens).
 * When no process takes controls for it, the lock's own words stand.
 */
async function resumeHeld(cli: CommandContext, error: unknown, prompt: string, database: string | undefined): Promise<number> {
  const held = error instanceof HostError && (error.cause as { code?: unknown } | undefined)?.code === 'SESSION_LOCKED' ? error.session : undefined
  if (!held || prompt) throw error
  try {
    return await sendCliControl(cli, { session: held, source: 'cli', action: 'resume' }, database)
  } catch (control) {
    if (control instanceof HostError && control.exitCode === ExitCode.NOT_HELD) throw error
    throw control
  }
}

/** Whether the session is the goal of a fleet job that a control paused (its job waits for a resume). */
async function fleetPaused(cli: CommandContext, session: string, database: string): Promise<boolean> {
  try {
    const reply = await controlChannel(cli, database).send({ session, source: 'cli', action: 'status' })
    return reply.ok && reply.status.fleetJob?.state === 'paused'
  } catch (error) {
    if (error instanceof ControlUnavailable) return false
    throw error
  }
}
