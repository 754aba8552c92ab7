// Controls for fleet goals through the database: a worker child runs the goal (only the model scripted),
// `goalkeeper pause/resume --database` and `goalkeeper board --database` reach it through a request row
// and a NOTIFY, the worker applies it with the control plugin's code and answers the same way.
import { mkdtemp, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, start } from '@goalkeeper/test-kit'
import { command, listQueue, readSessions, useFleet, worker } from './helpers.ts'

const fleet = useFleet({ script: fileURLToPath(new URL('./control-script.mjs', import.meta.url)) })

async function runningGoal(name: string) {
  const gates = await mkdtemp(path.join(os.tmpdir(), 'gk-gates-'))
  // No process of this machine's control directory holds the session: the control goes through the database.
  const env = { FLEET_GATES: gates, GOALKEEPER_CONTROL_DIR: path.join(gates, 'control') }
  const repo = await fleet.repo(name)
  const submitted = await command(fleet, ['submit', `Look around for ${name}`, '--repo', repo, '--max-rounds', '4'])
  expect(submitted.code, submitted.stderr).toBe(0)
  const job = submitted.stdout.trim()
  const session = /\(session (\S+)\)/.exec(submitted.stderr)![1]
  const one = worker(fleet, ['--name', `w-${name}`], env)
  await one.waitFor('stderr', /script: round 1 waits\n/)
  return { gates, env, job, session, one, cli: (...args: string[]) => command(fleet, args, env) }
}

const controlsOf = async (session: string) =>
  (await readSessions(fleet, [session])).get(session)!.records.filter((record) => record.type === 'control/applied').map((record) => record.data)

describe('controls for fleet goals', () => {
  it('pause --database pauses the goal in its worker, which ends the job as paused; resume --database queues it again and it completes', async () => {
    const { gates, job, session, one, cli } = await runningGoal('paused')
    const paused = await cli('pause', session, '--database', fleet.url)
    expect([paused.code, paused.stderr]).toEqual([0, ''])
    expect(paused.stdout).toMatch(new RegExp(`^paused session ${session} by fleet worker w-paused \\(goal paused, revision \\d+\\)\\n$`))
    await writeFile(path.join(gates, 'go-1'), '')
    await one.waitFor('stderr', new RegExp(`goal ${job} paused: its job waits for a resume\\n`))
    expect((await listQueue(fleet)).find((item) => item.id === job)).toMatchObject({ state: 'paused', jobState: 'cancelled', phase: 'paused', worker: null })
    const table = await cli('queue')
    expect(table.stdout).toMatch(new RegExp(`^${job} +paused +- +1 +paused `, 'm'))

    // No worker runs it now: a pause is refused as not held (exit 9), with the reason.
    const again = await cli('pause', session, '--database', fleet.url)
    expect([again.code, again.stderr]).toEqual([9, `goalkeeper: the fleet goal of session ${session} is paused and no worker runs it (job ${job}): resume it to put it back in the queue\n`])

    const resumed = await cli('resume', session, '--database', fleet.url)
    expect([resumed.code, resumed.stdout], resumed.stderr).toEqual([0, `resumed session ${session}: its fleet job ${job} is queued again\n`])
    await one.waitFor('stderr', new RegExp(`goal ${job} done: complete after 2 rounds`))
    expect((await listQueue(fleet)).find((item) => item.id === job)).toMatchObject({ state: 'done', phase: 'complete' })
    expect(await controlsOf(session)).toEqual([{ action: 'pause', source: 'cli', revision: expect.any(Number) }])
    one.child.kill('SIGTERM')
    expect(await one.exit).toBe(0)
  }, CLI_TIMEOUT)

  it('the board with --database shows the worker on the goal page, pauses the goal from its control API and queues it again with resume', async () => {
    const { gates, env, job, session, one } = await runningGoal('board')
    const board = start([...fleet.globals, 'board', '--database', fleet.url], { env: { ...fleet.env, ...env } })
    try {
      await board.waitFor('stdout', /^http:\/\/127\.0\.0\.1:\d+\/\?token=\S+\n/)
      const url = new URL(board.stdout().trim())
      const token = url.searchParams.get('token')!
      const page = await fetch(`${url.origin}/api/goal/${session}`, { headers: { 'x-board-token': token } })
      expect(page.status).toBe(200)
      const { control } = await page.json() as { control: { status: { goal: { revision: number } } } }
      expect(control).toMatchObject({ live: true, status: { worker: 'w-board', goal: { phase: 'active' } } })
      const post = (headers: Record<string, string>) => fetch(`${url.origin}/api/goal/${session}/control`, {
        method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ action: 'pause', revision: control.status.goal.revision }),
      })
      // The token and Origin checks stand before the database is reached.
      expect((await post({ origin: 'http://127.0.0.1:9', 'x-board-token': token })).status).toBe(403)
      const sent = await post({ origin: url.origin, 'x-board-token': token })
      expect(sent.status).toBe(200)
      expect(await sent.json()).toMatchObject({ ok: true, status: { worker: 'w-board', goal: { phase: 'paused' } } })
      await writeFile(path.join(gates, 'go-1'), '')
      await one.waitFor('stderr', new RegExp(`goal ${job} paused: its job waits for a resume\\n`))
      expect(await controlsOf(session)).toEqual([{ action: 'pause', source: 'board', revision: expect.any(Number) }])
      // The paused job's page offers the resume that queues it again.
      const after = await (await fetch(`${url.origin}/api/goal/${session}`, { headers: { 'x-board-token': token } })).json() as { control: unknown }
      expect(after.control).toMatchObject({ live: true, status: { pid: 0, goal: null, fleetJob: { id: job, state: 'paused' } } })
      const resume = await fetch(`${url.origin}/api/goal/${session}/control`, { method: 'POST', headers: { 'content-type': 'application/json', origin: url.origin, 'x-board-token': token }, body: '{"action":"resume"}' })
      expect([resume.status, await resume.json()]).toMatchObject([200, { ok: true, status: { fleetJob: { id: job, state: 'requeued' } } }])
      await one.waitFor('stderr', new RegExp(`goal ${job} done: complete after 2 rounds`))
    } finally {
      board.child.kill('SIGTERM')
      await board.exit
      one.child.kill('SIGTERM')
      await one.exit
    }
  }, CLI_TIMEOUT)
})
