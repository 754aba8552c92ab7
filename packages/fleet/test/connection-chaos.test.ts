// Workers while the database drops every connection, again and again (pg_terminate_backend, as a failover or
// an operator does): no worker crashes or exits, every goal still completes exactly once, and every session
// is whole and verified.
import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { CLI_TIMEOUT } from '@goalkeeper/test-kit'
import { doneIn, expectEveryGoalDoneOnce, listQueue, roundsIn, startWorkers, submit, submitGoals, terminateBackends, untilLogged, useFleet, worker } from './helpers.ts'

const fleet = useFleet()
const GOALS = 8
const CUTS = 4

it(`2 workers x 2, ${GOALS} goals, every connection of the database terminated ${CUTS} times mid-run: no crash, every goal completes once`, async () => {
  const goals = await submitGoals(fleet, 'chaos', GOALS)
  const { workers, logs } = startWorkers(fleet, ['w-a', 'w-b'], ['--concurrency', '2'])

  // Each cut lands when the model has been asked for more rounds: while goals are claimed, written and pushed.
  let terminated = 0
  for (let cut = 1; cut <= CUTS; cut++) {
    await untilLogged(workers, () => roundsIn(logs()) >= cut * 2 || doneIn(logs()).size === GOALS, `round ${cut * 2} of the model`)
    if (doneIn(logs()).size === GOALS) break
    terminated += await terminateBackends(fleet)
  }
  await untilLogged(workers, () => doneIn(logs()).size === GOALS, `${GOALS} goals done`, 120_000)
  for (const run of workers) run.child.kill('SIGTERM')
  expect(await Promise.all(workers.map((run) => run.exit))).toEqual([0, 0])
  // The cuts did hit the workers' connections (pg-boss's pool, the queue's, the session stores').
  expect(terminated).toBeGreaterThan(0)
  expect(logs()).not.toMatch(/Unhandled|uncaught/i)
  // Every goal ran to its end, whatever the cuts interrupted: its branch holds its result.
  await expectEveryGoalDoneOnce(fleet, goals)
}, CLI_TIMEOUT)

it('a goal whose session store cannot reach its database is tried again later, not failed for good', async () => {
  // The repository's composition keeps sessions on a server that refuses connections (as one restarting does).
  const own = (await readFile(fleet.yml, 'utf8')).replace('${GOALKEEPER_DATABASE_URL}', 'postgres://gk@127.0.0.1:1/down')
  expect(own).toContain('127.0.0.1:1/down')
  const repo = await fleet.repo('unreachable', { 'cordis.yml': own })
  const id = await submit(fleet, 'Write result.txt for goal-9', repo)
  const one = worker(fleet, ['--name', 'w-down'])
  await one.waitFor('stderr', new RegExp(`goal ${id} failed \\(it will be retried\\): .*cannot connect to it: .*ECONNREFUSED`))
  one.child.kill('SIGTERM')
  expect(await one.exit).toBe(0)
  expect(one.stderr()).not.toMatch(new RegExp(`goal ${id} failed: `))
  const listed = (await listQueue(fleet)).find((goal) => goal.id === id)
  expect(listed).toMatchObject({ state: 'queued', jobState: 'retry' })
}, CLI_TIMEOUT)
