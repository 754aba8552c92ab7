import { defineCommand } from '../command.ts'
import { promptFrom } from './run/prompt-input.ts'
import { HostError } from '../errors.ts'
import { cliCommand } from './render/hints.ts'
import { EXIT_CODE_HELP } from './render/outcome.ts'
import { reportResult } from './render/result.ts'
import { AgentRun } from './run/agent-run.ts'
import { withMaxSteps, type MaxStepsOptions } from './run/goal-options.ts'
import { prepareLastMessage, withOutputLastMessage, type LastMessageOptions } from './run/last-message.ts'
import { loadOutputSchema, withOutputSchema, type OutputSchemaOptions } from './run/output-schema.ts'

export interface RunOptions extends MaxStepsOptions, LastMessageOptions, OutputSchemaOptions {
  session?: string
  last?: boolean
  continue?: boolean
}

export default defineCommand<RunOptions>({
  name: 'run',
  description: 'send one prompt to the agent; its final answer goes to stdout',
  configure: (command) =>
    withOutputSchema(withOutputLastMessage(withMaxSteps(command)))
      .argument('<prompt...>', 'the prompt (several words are joined with spaces; `-` reads it from stdin)')
      .option('--session <id>', 'continue a saved session (id, or an unambiguous part of it) instead of a new one')
      .option('--last', 'continue the most recent session of this project')
      .option('--continue', 'the same as --last')
      .addHelpText('after', `\nThe session id and progress (tool calls, failures) go to stderr.\n${EXIT_CODE_HELP}`),
  async run(cli, [words], options) {
    const prompt = await promptFrom(cli, words, 'run')
    if (!prompt) throw new HostError('the prompt is empty', { hint: cliCommand(cli.globals, 'run', '<prompt>') })
    if ((options.last || options.continue) && options.session) throw new HostError('--last and --session both name a session', { hint: 'give one of them' })
    const run = await AgentRun.open(cli, { session: options.session, last: !!(options.last || options.continue), purpose: 'run', maxSteps: options.maxSteps, answerSchema: await loadOutputSchema(cli.globals.cwd, options.outputSchema), lastMessageFile: prepareLastMessage(cli.globals.cwd, options.outputLastMessage) })
    run.agent.send({ content: prompt })
    return reportResult(run, await run.untilRest(), { goal: false })
  },
})
