// Takeover in seconds: a SIGKILLed worker stops beating; `queue` shows it as lost; a live worker's sweep
// releases its job after `lostSeconds` (long before pg-boss's expiry), and another worker completes the goal.
// A live worker holding a goal for as long is never released.
import pg from 'pg'
import { expect, it } from 'vitest'
import { CLI_TIMEOUT } from '@goalkeeper/test-kit'
import { command, listQueue, submit, useFleet, worker } from './helpers.ts'

// An expiry far beyond the test: only the beat can release the job.
const fleet = useFleet({ fleet: { expireSeconds: 600, lostSeconds: 2 } })

it('a killed worker is shown lost, its job released by a live worker after lostSeconds and completed by another; a live worker keeps its job', async () => {
  const client = new pg.Client({ connectionString: fleet.url })
  await client.connect()
  try {
    const first = await submit(fleet, 'Write result.txt for goal-1', await fleet.repo('beat-1'))
    const doomed = worker(fleet, ['--name', 'doomed'], { FLEET_HOLD: '1' })
    await doomed.waitFor('stderr', /script: holding round 2 of goal-1/)
    expect((await listQueue(fleet)).find((goal) => goal.id === first)).toMatchObject({ state: 'running', worker: 'doomed', workerLost: false })

    doomed.child.kill('SIGKILL')
    await doomed.exit
    // Its silence, as the database's clock will see it once lostSeconds passed (no live worker sweeps yet).
    await client.query(`UPDATE goalkeeper_fleet_workers SET beat_at = now() - interval '1 hour' WHERE worker = 'doomed'`)
    expect((await listQueue(fleet)).find((goal) => goal.id === first)).toMatchObject({ state: 'running', worker: 'doomed', workerLost: true })
    const table = await command(fleet, ['queue'])
    expect(table.stdout).toMatch(new RegExp(`^${first} +running +doomed \\(lost\\) +`, 'm'))

    // A live worker that holds its own goal at round 2: its sweep releases the dead worker's job.
    const second = await submit(fleet, 'Write result.txt for goal-2', await fleet.repo('beat-2'))
    const holder = worker(fleet, ['--name', 'holder'], { FLEET_HOLD: '1' })
    await holder.waitFor('stderr', /script: holding round 2 of goal-2/)
    await holder.waitFor('stderr', new RegExp(`goal ${first}: worker doomed stopped beating 2 s ago; released its job`))
    const survivor = worker(fleet, ['--name', 'survivor'])
    await survivor.waitFor('stderr', new RegExp(`goal ${first} done: complete`))

    const listed = new Map((await listQueue(fleet)).map((goal) => [goal.id, goal]))
    expect(listed.get(first)).toMatchObject({ state: 'done', phase: 'complete', worker: 'survivor', attempts: 2 })
    // The holder beat all along: its goal is still its own, though it ran past lostSeconds.
    expect(listed.get(second)).toMatchObject({ state: 'running', worker: 'holder', workerLost: false })
    expect(holder.stderr()).not.toMatch(new RegExp(`goal ${second}: worker`))
    expect(survivor.stderr()).not.toMatch(/ lost: /)

    survivor.child.kill('SIGTERM')
    holder.child.kill('SIGTERM')
    expect(await survivor.exit).toBe(0)
    expect(await holder.exit).toBe(3)
    // Workers that stopped cleanly leave no beat behind; the killed one's row stays (it never said goodbye).
    expect((await client.query('SELECT worker FROM goalkeeper_fleet_workers ORDER BY worker')).rows.map((row) => row.worker)).toEqual(['doomed'])
  } finally {
    await client.end()
  }
}, CLI_TIMEOUT)
