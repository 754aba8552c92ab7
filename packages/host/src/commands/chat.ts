import { defineCommand } from '../command.ts'
import { ExitCode } from '../exit-codes.ts'

export default defineCommand({
  name: 'chat',
  description: 'talk with the agent; /goal commands manage the session goal',
  async run() {
    return ExitCode.OK
  },
})
