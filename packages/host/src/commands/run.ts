import { defineCommand, joinWords } from '../command.ts'
import { HostError } from '../errors.ts'
import { cliCommand } from './render/hints.ts'
import { EXIT_CODE_HELP } from './render/outcome.ts'
import { reportResult } from './render/result.ts'
import { AgentRun } from './run/agent-run.ts'

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
    const run = await AgentRun.open(cli, { session: options.session, purpose: 'run' })
    run.agent.send({ content: prompt })
    return reportResult(run, await run.untilRest(), { goal: false })
  },
})
