// The scripted model of the fleet tests: stateless steps (any worker, any goal), driven by the request.
// Round 1 writes result.txt naming the goal; round 2 completes it. With FLEET_HOLD set, round 2 first
// announces itself on stderr and waits forever: the tests kill or drain a worker in the middle of a round.
const textOf = (message) => (typeof message?.content === 'string' ? message.content : (message?.content ?? []).map((block) => block.text ?? '').join('\n'))
const opening = (request) => {
  const messages = request.messages
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role !== 'user') continue
    if (textOf(messages[i]).startsWith('<goal_round>') || messages[i - 1]?.role !== 'tool') return { index: i, text: textOf(messages[i]) }
  }
  return { index: -1, text: '' }
}
const roundOf = (request) => Number(/^<goal_round>[\s\S]*?\nRound: (\d+)\//.exec(opening(request).text)?.[1] ?? 0)
const turnResults = (request) => request.messages.slice(opening(request).index + 1).filter((message) => message.role === 'tool')
const goalName = (request) => /goal-\d+/.exec(request.messages.map(textOf).join('\n'))?.[0] ?? 'unknown'
const say = (line) => process.stderr.write(`script: ${line}\n`)

const step = async (request) => {
  const round = roundOf(request)
  const results = turnResults(request)
  const name = goalName(request)
  if (round <= 1) {
    if (!results.some((result) => result.name === 'write_file')) {
      say(`round ${round} of ${name}`)
      return { text: 'Writing the result.', toolCalls: [{ name: 'write_file', arguments: { path: 'result.txt', content: `${name} done\n` } }] }
    }
    return { text: 'Written; checking it next round.' }
  }
  if (process.env.FLEET_HOLD && !results.length) {
    say(`holding round ${round} of ${name}`)
    return new Promise(() => {})
  }
  const read = results.filter((result) => result.name === 'get_goal').at(-1)
  if (results.some((result) => result.name === 'update_goal')) return { text: 'Goal done.' }
  if (!read) return { text: 'Checking the goal.', toolCalls: [{ name: 'get_goal', arguments: {} }] }
  const goal = JSON.parse(read.content).goal
  return { text: 'Completing.', toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.goal_id, revision: goal.revision, action: 'complete' } }] }
}

export default Array.from({ length: 400 }, () => step)
