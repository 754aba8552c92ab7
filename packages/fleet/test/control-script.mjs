// The scripted model of the fleet control tests: round 1 announces itself and waits for the file go-1 in
// FLEET_GATES before it works, so a control arrives mid-round; round 2 completes the goal.
import { completeGoal, many, releasedIn, roundOf, say, turnResults } from '@goalkeeper/test-kit/model-script'

const released = releasedIn(process.env.FLEET_GATES)

export default many(async (request) => {
  const round = roundOf(request)
  if (round >= 2) return completeGoal(request)
  if (turnResults(request).length) return { text: `Round ${round} done.` }
  say(`round ${round} waits`)
  await released(`go-${round}`)
  return { text: 'Working.', toolCalls: [{ name: 'list_dir', arguments: {} }] }
}, 400)
