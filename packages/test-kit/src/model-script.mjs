// Helpers for scripted-model modules (the `scripted` provider's `module`): the scripts test-kit writes for
// CLI tests (cli.ts imports them into each one) and the fleet's script files import them from here. Plain
// JavaScript: a CLI child loads a script with Node's own import, without a TypeScript loader.
import { existsSync, watch } from 'node:fs'
import path from 'node:path'

/** The text of a message: its string content, or its text blocks joined. */
export const textOf = (message) =>
  typeof message?.content === 'string' ? message.content : (message?.content ?? []).map((block) => block.text ?? '').join('\n')

/** The user message that opened the current turn: a goal round, or one that does not follow a tool result (a steer does). */
export const opening = (request) => {
  const messages = request.messages
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role !== 'user') continue
    if (textOf(messages[i]).startsWith('<goal_round>') || messages[i - 1]?.role !== 'tool') return { index: i, text: textOf(messages[i]) }
  }
  return { index: -1, text: '' }
}

/** The goal round number of the current turn, or 0 for a human turn. */
export const roundOf = (request) => Number(/^<goal_round>[\s\S]*?\nRound: (\d+)\//.exec(opening(request).text)?.[1] ?? 0)

/** Tool messages of the current turn. */
export const turnResults = (request) => request.messages.slice(opening(request).index + 1).filter((message) => message.role === 'tool')

/** A line on stderr, `script: ` first: what tests wait for. */
export const say = (line) => process.stderr.write(`script: ${line}\n`)

/** A script of `count` calls of the same step. */
export const many = (step, count = 100) => Array.from({ length: count }, () => step)

/** The steps that complete the goal: read it with get_goal, then update_goal complete at its revision. */
export const completeGoal = (request) => {
  const results = turnResults(request)
  const read = results.filter((result) => result.name === 'get_goal').at(-1)
  const updated = results.find((result) => result.name === 'update_goal')
  if (updated) return { text: 'Goal done: everything is verified.' }
  if (!read) return { text: 'Checking the goal.', toolCalls: [{ name: 'get_goal', arguments: {} }] }
  const goal = JSON.parse(read.content).goal
  return { text: 'Completing.', toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.goal_id, revision: goal.revision, action: 'complete' } }] }
}

/** `released(name)` resolves when the file `dir/name` exists (fs.watch, no polling). */
export const releasedIn = (dir) => (name) => new Promise((resolve) => {
  const file = path.join(dir, name)
  if (existsSync(file)) return resolve()
  const watcher = watch(dir, () => {
    if (existsSync(file)) {
      watcher.close()
      resolve()
    }
  })
  if (existsSync(file)) {
    watcher.close()
    resolve()
  }
})
