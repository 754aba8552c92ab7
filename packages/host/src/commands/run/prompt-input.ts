import { joinWords, type CommandContext } from '../../command.ts'
import { HostError } from '../../errors.ts'
import { cliCommand } from '../render/hints.ts'

/** The prompt (or objective) from the words of the command line, or from stdin when they are a single `-`. */
export async function promptFrom(cli: CommandContext, words: unknown, command: string): Promise<string> {
  const text = joinWords(words as string[])
  if (text !== '-') return text
  const stdin = cli.io.stdin ?? process.stdin
  if (stdin.isTTY) {
    throw new HostError('`-` reads the text from stdin, which is a terminal here', { hint: `pipe it in: echo "…" | ${cliCommand(cli.globals, command, '-')}` })
  }
  let data = ''
  stdin.setEncoding?.('utf8')
  for await (const chunk of stdin) data += chunk
  return data.trim()
}
