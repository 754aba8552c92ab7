// Workers while their PostgreSQL server restarts (a fast shutdown: every connection ended, open transactions
// rolled back, nothing listening for a while, then a start): no worker crashes or exits, running goals go on
// or pause and are finished after it, every goal completes exactly once, and every session is whole and
// verified. The fleet has an embedded server of its own: the run's shared server never restarts.
import { expect, it } from 'vitest'
import { CLI_TIMEOUT, stressRounds } from '@goalkeeper/test-kit'
import { doneIn, expectEveryGoalDoneOnce, roundsIn, startWorkers, submitGoals, untilLogged, useFleet } from './helpers.ts'

const fleet = useFleet({ ownServer: true })
const GOALS = stressRounds(6, 16)
const RESTARTS = stressRounds(1, 4)
// How long the server stays down: longer than a beat and a poll, so every worker meets a refused connection.
const DOWN_MS = 2000

it(`2 workers x 2, ${GOALS} goals, the server restarted ${RESTARTS} time(s) mid-run: no crash, every goal completes once`, async () => {
  const goals = await submitGoals(fleet, 'restart', GOALS)
  const { workers, logs } = startWorkers(fleet, ['w-a', 'w-b'], ['--concurrency', '2'])
  let restarts = 0
  for (let restart = 1; restart <= RESTARTS; restart++) {
    // Each restart lands once the model was asked for more rounds: goals are claimed, written and pushed then.
    await untilLogged(workers, () => roundsIn(logs()) >= restart * 3 || doneIn(logs()).size === GOALS, `round ${restart * 3} of the model`)
    if (doneIn(logs()).size === GOALS) break
    const running = GOALS - doneIn(logs()).size
    await fleet.restart(DOWN_MS)
    restarts++
    expect(running).toBeGreaterThan(0)
  }
  await untilLogged(workers, () => doneIn(logs()).size === GOALS, `${GOALS} goals done`)
  for (const run of workers) run.child.kill('SIGTERM')
  expect(await Promise.all(workers.map((run) => run.exit))).toEqual([0, 0])
  expect(restarts).toBeGreaterThan(0)
  // The workers did meet the restart (a refused or ended connection, logged and tried again), and survived it.
  expect(logs()).toMatch(/ECONNREFUSED|terminat|shutdown|Connection terminated/i)
  expect(logs()).not.toMatch(/Unhandled|uncaught/i)
  await expectEveryGoalDoneOnce(fleet, goals)
}, CLI_TIMEOUT * 2)
