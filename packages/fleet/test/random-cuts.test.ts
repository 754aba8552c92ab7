// Workers while every connection of the database is terminated at random moments rather than at rounds: the
// cuts land wherever the workers are (set-up, a claim, a session batch, a push, a beat). No worker crashes or
// exits, and every goal completes exactly once, its session whole and verified.
import { expect, it } from 'vitest'
import { CLI_TIMEOUT, stressRounds } from '@goalkeeper/test-kit'
import { doneIn, expectEveryGoalDoneOnce, roundsIn, startWorkers, submitGoals, terminateBackends, untilLogged, useFleet } from './helpers.ts'

// Jobs expire after 15 s of silence, not 3: a cut fails a heartbeat or two, and the cuts rather than expiries
// should decide what happens here (a live worker's expired job is connection-chaos's and stale-run's).
const fleet = useFleet({ fleet: { expireSeconds: 15 } })

// A few cuts by default; many more with GOALKEEPER_STRESS=1.
it('4 workers, goals in flight, every connection terminated at random moments: no crash, every goal completes once', async () => {
  const count = stressRounds(4, 16)
  const cuts = stressRounds(5, 25)
  const goals = await submitGoals(fleet, 'random', count)
  const { workers, logs } = startWorkers(fleet, ['w-1', 'w-2', 'w-3', 'w-4'])
  let terminated = 0
  await untilLogged(workers, () => roundsIn(logs()) >= 1, 'the first round of the model')
  for (let cut = 1; cut <= cuts && doneIn(logs()).size < count; cut++) {
    // A random pause (0.2-2.5 s) before each cut: what is under way when it lands is left to chance on purpose.
    await new Promise((resolve) => setTimeout(resolve, 200 + Math.random() * 2300))
    expect(workers.filter((run) => run.child.exitCode !== null), 'a worker exited during the cuts').toEqual([])
    terminated += await terminateBackends(fleet)
  }
  await untilLogged(workers, () => doneIn(logs()).size === count, `${count} goals done`)
  for (const run of workers) run.child.kill('SIGTERM')
  expect(await Promise.all(workers.map((run) => run.exit))).toEqual([0, 0, 0, 0])
  expect(terminated).toBeGreaterThan(0)
  expect(logs()).not.toMatch(/Unhandled|uncaught/i)
  await expectEveryGoalDoneOnce(fleet, goals)
}, CLI_TIMEOUT * 2)
