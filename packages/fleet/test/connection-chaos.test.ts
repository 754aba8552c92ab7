// Workers while the database drops every connection, again and again (pg_terminate_backend, as a failover or
// an operator does): no worker crashes or exits, every goal still completes exactly once, and every session
// is whole and verified.
import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { Config, GoalQueue } from '@goalkeeper/fleet'
import { CLI_TIMEOUT } from '@goalkeeper/test-kit'
import { FLEET, listQueue, readSessions, submit, terminateBackends, untilLogged, useFleet, worker } from './helpers.ts'

const fleet = useFleet()
const GOALS = 8
const CUTS = 4

const doneIn = (text: string) => new Set([...text.matchAll(/goal (\S+) done: complete/g)].map((match) => match[1]))
const roundsIn = (text: string) => [...text.matchAll(/script: round \d+ of goal-\d+/g)].length

it(`2 workers x 2, ${GOALS} goals, every connection of the database terminated ${CUTS} times mid-run: no crash, every goal completes once`, async () => {
  const repos = await Promise.all(Array.from({ length: GOALS }, (_, index) => fleet.repo(`chaos-${index + 1}`)))
  const queue = new GoalQueue(Config({ ...FLEET }), fleet.url)
  const jobs: { id: string; sessionId: string; repo: string; name: string }[] = []
  try {
    for (const [index, repo] of repos.entries()) {
      const { id, job } = await queue.submit({ objective: `Write result.txt for goal-${index + 1}`, repo, ref: 'main', maxRounds: 6 })
      jobs.push({ id, sessionId: job.sessionId, repo, name: `goal-${index + 1}` })
    }
  } finally {
    await queue.stop()
  }
  const workers = [worker(fleet, ['--name', 'w-a', '--concurrency', '2']), worker(fleet, ['--name', 'w-b', '--concurrency', '2'])]
  const logs = () => workers.map((run) => run.stderr()).join('')

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

  const listed = new Map((await listQueue(fleet)).map((goal) => [goal.id, goal]))
  for (const job of jobs) expect(listed.get(job.id)).toMatchObject({ state: 'done', phase: 'complete', sessionId: job.sessionId })
  // Whether each branch holds every round its session calls finished, after a run cut short, is the
  // kill-at-every-point test's; here every goal ran to its end, whatever the cuts interrupted.
  const sessions = await readSessions(fleet, jobs.map((job) => job.sessionId))
  for (const job of jobs) {
    const { records, integrity } = sessions.get(job.sessionId)!
    expect(integrity.state).toBe('signed')
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index))
    expect(records.filter((record) => record.type === 'goal/change' && record.data.op === 'create')).toHaveLength(1)
    expect(records.filter((record) => record.type === 'goal/change' && record.data.op === 'complete')).toHaveLength(1)
  }
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
