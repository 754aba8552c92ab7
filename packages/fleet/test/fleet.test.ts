// Three worker processes drain twelve goals; one worker is SIGKILLed while its goals are in the middle of
// a round. Every goal still finishes, every session is whole and verified, every branch holds its goal's
// result, and no goal was written by two workers at once.
import pg from 'pg'
import { expect, it } from 'vitest'
import { CLI_TIMEOUT } from '@goalkeeper/test-kit'
import { doneIn, listQueue, readSessions, submitGoals, untilLogged, useFleet, worker } from './helpers.ts'

// A worker composing two goals at once on a loaded machine can stall its heartbeats for seconds: jobs expire
// after 15 s of silence rather than 3, or a live survivor would rightly see its job lost and the test's
// "no worker lost a job" would not hold (the killed worker's job is released by that expiry or its lost beat).
const fleet = useFleet({ fleet: { expireSeconds: 15 } })
const GOALS = 12

it('3 workers, 12 goals, one worker SIGKILLed mid-round: every goal completes once, sessions whole, branches hold the results', async () => {
  const jobs = await submitGoals(fleet, 'fleet', GOALS)

  // The doomed worker starts first and holds the goal it takes at round 2: killed there, mid-round.
  const doomed = worker(fleet, ['--name', 'doomed'], { FLEET_HOLD: '1' })
  await doomed.waitFor('stderr', /script: holding round 2 of goal-\d+/)
  const survivors = [worker(fleet, ['--name', 'w-b', '--concurrency', '2']), worker(fleet, ['--name', 'w-c', '--concurrency', '2'])]
  doomed.child.kill('SIGKILL')
  await doomed.exit
  const held = [...doomed.stderr().matchAll(/goal (\S+) \(session \S+\) claimed/g)].map((match) => match[1])
  expect(held).toHaveLength(1)

  await untilLogged(survivors, () => doneIn(survivors.map((run) => run.stderr()).join('')).size === GOALS, `${GOALS} goals done`)
  for (const run of survivors) run.child.kill('SIGTERM')
  expect(await Promise.all(survivors.map((run) => run.exit))).toEqual([0, 0])
  const logs = { doomed: doomed.stderr(), 'w-b': survivors[0]!.stderr(), 'w-c': survivors[1]!.stderr() }
  for (const log of Object.values(logs)) expect(log).not.toMatch(/ lost: | failed/)

  // The queue: all done and complete, each by a survivor.
  const listed = new Map((await listQueue(fleet)).map((goal) => [goal.id, goal]))
  for (const job of jobs) {
    expect(listed.get(job.id)).toMatchObject({ state: 'done', phase: 'complete', sessionId: job.sessionId })
    expect(['w-b', 'w-c']).toContain(listed.get(job.id).worker)
  }

  // Every branch holds its goal's result.
  for (const job of jobs) expect([job.name, fleet.branches(job.repo), fleet.show(job.repo, `goalkeeper/${job.sessionId}`, 'result.txt')]).toEqual([job.name, ['main', `goalkeeper/${job.sessionId}`].sort(), `${job.name} done\n`])

  const sessions = await readSessions(fleet, jobs.map((job) => job.sessionId))
  for (const job of jobs) {
    const { records, integrity } = sessions.get(job.sessionId)!
    // Signatures verify over the whole log, and seqs run 0..n-1 with no gap or repeat.
    expect(integrity.state).toBe('signed')
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index))
    expect(records.filter((record) => record.type === 'goal/change' && record.data.op === 'create')).toHaveLength(1)
    expect(records.filter((record) => record.type === 'goal/change' && record.data.op === 'complete')).toHaveLength(1)
    // One claim per run of the job, as each worker logged it: none lost, none repeated.
    const claims = records.filter((record) => record.type === 'fleet/claim')
    const runs = Object.entries(logs).flatMap(([name, log]) => (log.includes(`goal ${job.id} (session`) ? [name] : []))
    expect(claims.map((claim) => claim.data.worker).sort()).toEqual(runs.sort())
    expect(claims[0]!.data).toMatchObject({ job: job.id, takeover: false, rearmed: false })
    if (held.includes(job.id)) {
      // Taken over from the killed worker: round 1 (and its push) survived, round 2 was cut, the goal re-armed by a survivor.
      expect(claims).toHaveLength(2)
      expect(claims[0]!.data.worker).toBe('doomed')
      expect(claims[1]!.data).toMatchObject({ takeover: true, rearmed: true, phase: 'active' })
      const takeover = records.indexOf(claims[1]!)
      const before = records.slice(0, takeover)
      expect(before.filter((record) => record.type === 'fleet/push').map((record) => [record.data.worker, record.data.round])).toEqual([['doomed', 1]])
      expect(before.filter((record) => record.type === 'turn/start').map((record) => record.data.turn)).toEqual([1, 2])
      // The cut round was closed by the repair of the next writer before it claimed the session.
      expect(before.findLast((record) => record.type === 'turn/end')?.data.turn).toBe(2)
      expect(records.slice(takeover).every((record) => record.type !== 'fleet/claim' || record === claims[1])).toBe(true)
    } else {
      expect(claims).toHaveLength(1)
      expect(claims[0]!.data.worker).not.toBe('doomed')
    }
    // Between two claims only one worker wrote: every push after a claim names the claiming worker.
    let owner = ''
    for (const record of records) {
      if (record.type === 'fleet/claim') owner = record.data.worker
      if (record.type === 'fleet/push') expect(record.data.worker).toBe(owner)
    }
  }
  // No lease is left behind: every writer gave its session back (the killed one's expired and was taken over).
  const client = new pg.Client({ connectionString: fleet.url })
  await client.connect()
  try {
    expect((await client.query('SELECT count(*)::int AS n FROM goalkeeper_session_leases')).rows[0].n).toBe(0)
  } finally {
    await client.end()
  }
}, CLI_TIMEOUT)
