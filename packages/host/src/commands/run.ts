import { defineCommand } from '../command.ts'
import { HostError } from '../errors.ts'
import { cliCommand } from './support/hints.ts'
import { EXIT_CODE_HELP } from './support/outcome.ts'
import { joinWords, reportResult } from './support/report.ts'
import { AgentWork } from './support/work.ts'

export default defineCommand({
  name: 'run',
  description: 'send one prompt to the agent; its final answer goes to stdout',
  configure: (command) =>
    command
      .argument('<prompt...>', 'the prompt (several words are joined with spaces)')
      .option('--session <id>', 'continue a saved session (id, or an unambiguous part of it) instead of a new one')
      .addHelpText('after', `\nThe session id and progress (tool calls, failures) go to stderr.\n${EXIT_CODE_HELP}`),
  async run(cli, [words], options) {
    const prompt = joinWords(words)
    if (!prompt) throw new HostError('the prompt is empty', { hint: cliCommand(cli.globals, 'run', '<prompt>') })
    const work = await AgentWork.open(cli, { session: options.session, purpose: 'run' })
    work.agent.send({ content: prompt })
    return reportResult(work, await work.untilRest(), { goal: false })
  },
})
