// The scripted model of the fleet tests: stateless steps (any worker, any goal), driven by the request.
// Round 1 writes result.txt naming the goal; round 2 completes it. With FLEET_HOLD set, round 2 first
// announces itself on stderr and waits forever: the tests kill or drain a worker in the middle of a round.
// Told that a takeover rewound the workspace after its last write, it writes the file again, as a model
// reading the notice would: a loaded machine can release a live worker's job mid-round. A history without
// any write (round 1 cancelled before the model was asked) makes it write in the round it is in.
import { completeGoal, many, roundOf, say, textOf, turnResults } from '@goalkeeper/test-kit/model-script'

const goalName = (request) => /goal-\d+/.exec(request.messages.map(textOf).join('\n'))?.[0] ?? 'unknown'

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
  const rewound = request.messages.findLastIndex((message) => textOf(message).includes('<workspace_rewound>'))
  const written = request.messages.findLastIndex((message) => message.role === 'tool' && message.name === 'write_file')
  if (rewound > written) {
    say(`writing again in round ${round} of ${name}`)
    return { text: 'The workspace was rewound: writing the result again.', toolCalls: [{ name: 'write_file', arguments: { path: 'result.txt', content: `${name} done\n` } }] }
  }
  // Round 1 never reached the model (a session write failed as it began, and the round was cancelled): the
  // history shows no write, so the model writes now rather than completing a goal whose file it never wrote.
  if (written === -1) {
    say(`writing late in round ${round} of ${name}`)
    return { text: 'Nothing was written yet: writing the result.', toolCalls: [{ name: 'write_file', arguments: { path: 'result.txt', content: `${name} done\n` } }] }
  }
  if (process.env.FLEET_HOLD && !results.length) {
    say(`holding round ${round} of ${name}`)
    return new Promise(() => {})
  }
  return completeGoal(request)
}

export default many(step, 400)
