// A failover as the workers see it: their database is reached through a TCP proxy (test-kit's), which mid-run
// drops every connection at once and refuses new ones for a few seconds, then forwards again to the same
// server (as a promoted replica behind the same address would answer). No worker crashes or exits, every goal
// completes exactly once, its session whole and verified and its branch holding its result.
import { afterAll, beforeAll, expect, it } from 'vitest'
import { CLI_TIMEOUT, startTcpProxy, stressRounds, type TcpProxy } from '@goalkeeper/test-kit'
import { doneIn, expectEveryGoalDoneOnce, submitGoals, untilLogged, useFleet, worker } from './helpers.ts'

const fleet = useFleet()
const GOALS = stressRounds(4, 12)
const FAILOVERS = stressRounds(1, 3)
// Longer than a beat and a poll: every worker meets refused connections while it lasts.
const DOWN_MS = 3000

let proxy: TcpProxy
beforeAll(async () => {
  // The workers (and their goals' session stores) reach the database only through the proxy; the test
  // itself submits and reads directly.
  proxy = await startTcpProxy(fleet.url)
  fleet.env = { ...fleet.env, GOALKEEPER_DATABASE_URL: proxy.url }
})
afterAll(async () => {
  await proxy?.close()
})

const roundsIn = (text: string) => [...text.matchAll(/script: round \d+ of goal-\d+/g)].length

it(`2 workers x 2, ${GOALS} goals, ${FAILOVERS} failover(s) of their database mid-run: no crash, every goal done once with its work`, async () => {
  const goals = await submitGoals(fleet, 'failover', GOALS)
  const workers = [worker(fleet, ['--name', 'w-a', '--concurrency', '2']), worker(fleet, ['--name', 'w-b', '--concurrency', '2'])]
  const logs = () => workers.map((run) => run.stderr()).join('')
  const outages: { dropped: number; refused: number }[] = []
  for (let failover = 1; failover <= FAILOVERS; failover++) {
    // Each failover lands once the model was asked for more rounds: goals are claimed, written and pushed then.
    await untilLogged(workers, () => roundsIn(logs()) >= failover * 2 || doneIn(logs()).size === GOALS, `round ${failover * 2} of the model`)
    if (doneIn(logs()).size === GOALS) break
    outages.push(await proxy.failover(DOWN_MS))
  }
  await untilLogged(workers, () => doneIn(logs()).size === GOALS, `${GOALS} goals done`)
  for (const run of workers) run.child.kill('SIGTERM')
  expect(await Promise.all(workers.map((run) => run.exit))).toEqual([0, 0])
  // The failovers did hit the workers: open connections dropped, new ones refused while it lasted.
  expect(outages.length).toBeGreaterThan(0)
  for (const outage of outages) {
    expect(outage.dropped).toBeGreaterThan(0)
    expect(outage.refused).toBeGreaterThan(0)
  }
  expect(logs()).not.toMatch(/Unhandled|uncaught/i)
  await expectEveryGoalDoneOnce(fleet, goals)
}, CLI_TIMEOUT * 2)
