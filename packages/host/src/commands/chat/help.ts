import { GOAL_COMMAND_USAGE } from '@goalkeeper/tool-goal'

/** Where the descriptions of /help start; a longer command gets a line of its own, its description below. */
const COLUMN = 28

/** Chat's own commands, with what each does. */
const CHAT_COMMANDS: [string, string][] = [
  ['/model', 'the model this chat uses'],
  ['/model <provider>[/<model>]', 'continue this session with another model'],
  ['/cost', 'tokens and cost of this session (and the goal\'s spend against its budgets)'],
  ['/diff', 'what this session changed in the workspace, as unified diffs'],
  ['/compact', 'compact the history now: a summary replaces the earlier conversation'],
  ['/clear', 'start a new session in this workspace; the goal stays with the old one'],
  ['/resume', 'list the recent sessions of this workspace'],
  ['/resume <id>', 'continue another session (its id, or an unambiguous part of it)'],
  ['/help', 'this text'],
  ['/exit', 'leave (or Ctrl-D); Ctrl-C cancels the running turn, twice at an empty prompt leaves'],
]

/** `/goal ...  what it does`: the goal plugin's usage lines, split where its columns are. */
function goalCommands(): [string, string][] {
  return GOAL_COMMAND_USAGE.split('\n').map((line) => {
    const [command, description = ''] = line.split(/ {2,}/, 2)
    return [command, description]
  })
}

/** The /help text: every command in one column, its description in the next, aligned. */
export function chatHelp(): string {
  const rows = [...goalCommands(), ...CHAT_COMMANDS].flatMap(([command, description]) => {
    if (!description) return [command]
    if (command.length >= COLUMN - 1) return [command, `${' '.repeat(COLUMN)}${description}`]
    return [`${command.padEnd(COLUMN)}${description}`]
  })
  return ['Type a message and press Enter to send it. While a goal runs, what you type goes first: the next round waits.', ...rows].join('\n')
}
