import { defineCommand } from '../command.ts'
import { ExitCode } from '../exit-codes.ts'
import { EXIT_CODE_HELP } from './support/outcome.ts'
import { continuationHint, joinWords, reportResult } from './support/report.ts'
import { AgentWork } from './support/work.ts'

export default defineCommand({
  name: 'resume',
  description: 'continue a saved session: run its unanswered inputs, then the prompt if one is given',
  configure: (command) =>
    command
      .argument('<id>', 'the session (its id, or an unambiguous part of it; see `goalkeeper sessions`)')
      .argument('[prompt...]', 'a new prompt for the session')
      .addHelpText('after', `
A goal found in the session is loaded disarmed; resume it with \`goalkeeper goal --session <id>\`.
${EXIT_CODE_HELP}`),
  async run(cli, [id, words]) {
    const work = await AgentWork.open(cli, { session: String(id), purpose: 'resume' })
    const prompt = joinWords(words)
    // send wakes the agent; restored inputs join the same batch, ahead of the prompt.
    if (prompt) work.agent.send({ content: prompt })
    else if (!work.agent.wake()) {
      work.term.note('nothing to run: the session has no unanswered input (give a prompt to continue it)')
      continuationHint(work, work.goal())
      return work.finish(ExitCode.OK)
    }
    return reportResult(work, await work.untilRest(), { goal: false })
  },
})
