import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, jsonLines } from '@goalkeeper/test-kit'
import { command, listQueue, readSessions, submit, useFleet, worker } from './helpers.ts'

const fleet = useFleet()

describe('submit and queue', () => {
  it('submit prints the job id; queue lists it queued with its session, then done with worker and rounds', async () => {
    const repo = await fleet.repo('listed')
    const submitted = await command(fleet, ['submit', 'Write result.txt for goal-1', '--repo', repo, '--ref', 'main', '--max-rounds', '4'])
    expect(submitted.code).toBe(0)
    const id = submitted.stdout.trim()
    expect(id).toMatch(/^[0-9a-f-]{36}$/)
    expect(submitted.stderr).toMatch(new RegExp(`queued goal ${id} \\(session \\d{8}-\\d{6}-[a-z2-7]{6}\\) for ${repo} main`))

    const table = await command(fleet, ['queue'])
    expect(table.code).toBe(0)
    expect(table.stdout).toMatch(/^ID +STATE +WORKER +ROUNDS +PHASE +SESSION +OBJECTIVE$/m)
    expect(table.stdout).toMatch(new RegExp(`^${id} +queued +- +- +- +\\S+ +Write result.txt for goal-1$`, 'm'))

    const one = worker(fleet, ['--name', 'w-listed'])
    await one.waitFor('stderr', new RegExp(`goal ${id} done: complete after 2 rounds`))
    one.child.kill('SIGTERM')
    expect(await one.exit).toBe(0)
    const [goal] = (await listQueue(fleet)).filter((item) => item.id === id)
    expect(goal).toMatchObject({ state: 'done', worker: 'w-listed', rounds: 2, phase: 'complete', objective: 'Write result.txt for goal-1' })
    expect(fleet.show(repo, `goalkeeper/${goal.sessionId}`, 'result.txt')).toBe('goal-1 done\n')
  }, CLI_TIMEOUT)

  it('refuses a submit without a repository or objective, and without a database, with a clear line', async () => {
    const noRepo = await command(fleet, ['submit', 'x'])
    expect(noRepo.code).toBe(64)
    expect(noRepo.stderr).toMatch(/--repo <url>/)
    const empty = await command(fleet, ['submit', '', '--repo', '/nowhere'])
    expect(empty.code).toBe(64)
    expect(empty.stderr).toMatch(/the objective is empty/)
    const noDb = await command(fleet, ['submit', 'x', '--repo', '/nowhere'], { GOALKEEPER_DATABASE_URL: '', DATABASE_URL: '' })
    expect(noDb.code).toBe(64)
    expect(noDb.stderr).toMatch(/needs a PostgreSQL URL/)
    const unreachable = await command(fleet, ['worker', '--database', 'postgres://postgres@127.0.0.1:1/none'])
    expect(unreachable.code).toBe(64)
    expect(unreachable.stderr).toMatch(/cannot use the queue's database: connect ECONNREFUSED 127\.0\.0\.1:1/)
  }, CLI_TIMEOUT)

  it('against an unreachable database, queue, submit and worker say so in one line, the URL masked only where it has a password', async () => {
    // The composition's session entry reads the same variable: it fails first, and is the one line.
    for (const [url, shown] of [['postgres://gk@127.0.0.1:1/none', 'postgres://gk@127.0.0.1:1/none'], ['postgres://gk:Hunter2Hunter2@127.0.0.1:1/none', 'postgres://gk:***@127.0.0.1:1/none']]) {
      for (const args of [['queue'], ['submit', 'x', '--repo', '/nowhere'], ['worker']]) {
        const result = await command(fleet, args, { GOALKEEPER_DATABASE_URL: url })
        expect([args[0], result.code, result.stderr.trim().split('\n')]).toEqual([args[0], 64, [
          `goalkeeper: ${args[0]} needs ctx.sessions, to check its key against the fleet's: entry "session": apply failed: database ${shown}: cannot connect to it: connect ECONNREFUSED 127.0.0.1:1 (hint: fix the entry in cordis.yml (or the database it names))`,
        ]])
      }
    }
    // Only the queue's database unreachable (--database; the sessions' is fine): its own one line, the URL whole.
    const queue = await command(fleet, ['queue', '--database', 'postgres://gk@127.0.0.1:1/none'])
    expect([queue.code, queue.stderr.trim().split('\n')]).toEqual([64, ["goalkeeper: cannot use the queue's database: connect ECONNREFUSED 127.0.0.1:1 (hint: check --database, GOALKEEPER_DATABASE_URL or DATABASE_URL)"]])
  }, CLI_TIMEOUT)

  it('a job whose repository does not exist fails with the reason, and the worker goes on', async () => {
    const id = await submit(fleet, 'Write result.txt for goal-9', `file://${fleet.dir}/repos/missing.git`)
    const one = worker(fleet, ['--name', 'w-bad'])
    await one.waitFor('stderr', new RegExp(`goal ${id} failed: `))
    expect(one.stderr()).toMatch(new RegExp(`goal ${id} failed: git ls-remote failed: .*missing\\.git.* does not appear to be a git repository`))
    one.child.kill('SIGTERM')
    expect(await one.exit).toBe(0)
    const [goal] = (await listQueue(fleet)).filter((item) => item.id === id)
    expect(goal.state).toBe('failed')
    expect(goal.output).toMatchObject({ code: 'GIT_FAILED', message: expect.stringMatching(/^git ls-remote failed: .*missing\.git.* does not appear to be a git repository/) })
    const table = await command(fleet, ['queue', '--state', 'failed'])
    expect(table.stdout).toMatch(new RegExp(`^${id} +failed .*\\(git ls-remote failed`, 'm'))
  }, CLI_TIMEOUT)
})

describe('composition', () => {
  it('a repository with a cordis.yml of its own composes its goals; one without uses the worker\'s', async () => {
    // The repository's composition: the worker's, with a round cap of its own for every goal it creates.
    const own = (await readFile(fleet.yml, 'utf8')).replace("name: '@goalkeeper/goal'\n", "name: '@goalkeeper/goal'\n  config: {\"defaultMaxGoalRounds\":7}\n")
    expect(own).toContain('defaultMaxGoalRounds')
    const composed = await fleet.repo('composed', { 'cordis.yml': own })
    const plain = await fleet.repo('plain')
    const ownId = await submit(fleet, 'Write result.txt for goal-5', composed)
    const plainId = await submit(fleet, 'Write result.txt for goal-6', plain)
    const one = worker(fleet, ['--name', 'w-compose'])
    await one.waitFor('stderr', new RegExp(`goal ${ownId} done: complete`))
    await one.waitFor('stderr', new RegExp(`goal ${plainId} done: complete`))
    one.child.kill('SIGTERM')
    expect(await one.exit).toBe(0)
    expect(one.stderr()).toMatch(new RegExp(`goal ${ownId}: composed by the workspace's cordis.yml`))
    expect(one.stderr()).not.toMatch(new RegExp(`goal ${plainId}: composed by`))
    const listed = (await listQueue(fleet)).filter((item) => item.id === ownId || item.id === plainId)
    const sessions = await readSessions(fleet, listed.map((item) => item.sessionId))
    const capOf = (id: string) => sessions.get(listed.find((item) => item.id === id)!.sessionId)!.records.find((record) => record.type === 'goal/change')!.data.goal.maxGoalRounds
    expect([capOf(ownId), capOf(plainId)]).toEqual([7, 256])
  }, CLI_TIMEOUT)
})

describe('drain and takeover', () => {
  it('SIGTERM pauses the running goal and returns its job; the next worker re-arms it and records itself', async () => {
    const repo = await fleet.repo('drained')
    const id = await submit(fleet, 'Write result.txt for goal-2', repo)
    const first = worker(fleet, ['--name', 'w-first'], { FLEET_HOLD: '1' })
    await first.waitFor('stderr', /script: holding round 2 of goal-2/)
    first.child.kill('SIGTERM')
    expect(await first.exit).toBe(3)
    expect(first.stderr()).toMatch(new RegExp(`goal ${id}: draining: cancelled the running round`))
    expect(first.stderr()).toMatch(new RegExp(`goal ${id} returned to the queue`))
    const [queued] = (await listQueue(fleet)).filter((item) => item.id === id)
    expect(queued).toMatchObject({ state: 'queued', phase: 'paused', worker: null, rounds: 2 })

    const second = worker(fleet, ['--name', 'w-second'])
    await second.waitFor('stderr', new RegExp(`goal ${id} done: complete after 3 rounds`))
    expect(second.stderr()).toMatch(new RegExp(`goal ${id}: took over the goal \\(paused, 2/256 rounds\\) and re-armed it`))
    second.child.kill('SIGTERM')
    expect(await second.exit).toBe(0)

    const sessionId = queued.sessionId
    const { records, integrity } = (await readSessions(fleet, [sessionId])).get(sessionId)!
    expect(integrity.state).toBe('signed')
    const fleetRecords = records.filter((record) => record.type.startsWith('fleet/') && record.type !== 'fleet/push')
    expect(fleetRecords.map((record) => [record.type, record.data.worker, record.data.takeover ?? null, record.data.rearmed ?? null])).toEqual([
      ['fleet/claim', 'w-first', false, false],
      ['fleet/release', 'w-first', null, null],
      ['fleet/claim', 'w-second', true, true],
    ])
    // The claim comes before the goal is re-armed, and the re-arm is the goal/change right after it.
    const claim = records.findIndex((record) => record.type === 'fleet/claim' && record.data.worker === 'w-second')
    expect(records.slice(claim + 1).find((record) => record.type === 'goal/change')?.data.op).toBe('resume')
    expect(fleet.show(repo, `goalkeeper/${sessionId}`, 'result.txt')).toBe('goal-2 done\n')

    // sessions --database names the worker that ran each session last, beside its goal phase, rounds and spend.
    // A terminal wide enough that no column is left out or cut (the 80-column fit is host's cli-columns test).
    const listing = await command(fleet, ['sessions', '--database', fleet.url, '--all'], { COLUMNS: '400' })
    expect(listing.code).toBe(0)
    expect(listing.stdout).toMatch(/^ID +STARTED +LAST ACTIVITY +GOAL +WORKER +DIRECTORY +TITLE$/m)
    expect(listing.stdout).toMatch(new RegExp(`^${sessionId} .* complete 3/256(, [^ ]+)?; not verified +w-second +`, 'm'))
    const json = await command(fleet, ['--json', 'sessions', '--database', fleet.url, '--all'])
    const row = jsonLines(json.stdout).find((item) => item.id === sessionId)
    expect(row).toMatchObject({ worker: 'w-second', goal: { phase: 'complete', roundsStarted: 3 } })
  }, CLI_TIMEOUT)
})
