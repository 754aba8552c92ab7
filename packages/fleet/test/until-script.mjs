// The scripted model of the fleet's condition-goal test, stateless (any worker, any goal), driven by the
// request. As the agent it never calls update_goal: round 1 writes result.txt saying DRAFT; a later round
// writes FINISHED only when its prompt carries the judge's refusal. As the judge (the same model, asked with
// the judge's system prompt) it finds the condition met once the evidence shows FINISHED.
const textOf = (message) => (typeof message?.content === 'string' ? message.content : (message?.content ?? []).map((block) => block.text ?? '').join('\n'))
const say = (line) => process.stderr.write(`script: ${line}\n`)

const judge = (request) => {
  const evidence = request.messages.map(textOf).join('\n')
  const met = evidence.includes('FINISHED')
  say(`judge: ${met ? 'met' : 'not-met'}`)
  return {
    text: JSON.stringify(met
      ? { verdict: 'met', reasons: ['result.txt says FINISHED.'], missing: [] }
      : { verdict: 'not-met', reasons: ['result.txt says DRAFT.'], missing: ['result.txt saying FINISHED'] }),
  }
}

const agent = (request) => {
  const prompt = request.messages.map(textOf).filter((text) => text.startsWith('<goal_round>')).at(-1) ?? ''
  const round = Number(/\nRound: (\d+)\//.exec(prompt)?.[1] ?? 0)
  const last = request.messages.at(-1)
  if (last?.role === 'tool') return { text: `Round ${round}: wrote result.txt.` }
  const refused = prompt.includes('not accepted by the judge') && prompt.includes('result.txt says DRAFT.')
  say(`round ${round}${refused ? ' after a refusal' : ''}`)
  return { toolCalls: [{ name: 'write_file', arguments: { path: 'result.txt', content: refused ? 'FINISHED\n' : 'DRAFT\n' } }] }
}

const step = async (request) => (request.system?.startsWith('You judge whether') ? judge(request) : agent(request))

export default Array.from({ length: 400 }, () => step)
