import { defineCommand, joinWords } from '../command.ts'
import { HostError } from '../errors.ts'
import { ExitCode } from '../exit-codes.ts'
import { EXIT_CODE_HELP } from './render/outcome.ts'
import { continuationHint, reportResult } from './render/result.ts'
import { databaseEnv } from './lookup/database.ts'
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
${EXIT_CODE_HELP}`),
  async run(cli, [id, words], options) {
    const last = !!(options.last || options.continue)
    if (!last && id === undefined) throw new HostError('resume needs the session: its id, or --last', { hint: 'goalkeeper sessions lists them' })
    const run = await AgentRun.open(cli, { ...(last ? { last } : { session: String(id) }), purpose: 'resume', acceptTruncation: !!options.acceptTruncation, ...databaseEnv(options.database), lastMessageFile: prepareLastMessage(cli.globals.cwd, options.outputLastMessage) })
    // With --last there is no id: the first word is the prompt's.
    const prompt = joinWords(last && id !== undefined ? [String(id), ...(words as string[])] : words)
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
