import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
// The session service's contract helpers and racing child, run here on the file store they exercise.
import { racer as spawnRacer } from '../../session/test/fixtures/racer.ts'
import { appsPerTest, readLines, tempDir, TEST_KEY } from '../../session/test/helpers.ts'
import { logFiles, stressRounds } from '@goalkeeper/test-kit'

const ROUNDS = stressRounds(10, 50)
const PER_ROUND = 20
// A guard against a hang, not a speed check: each round starts two processes, which took over 4 s at a load of 25.
const RACE_TIMEOUT = ROUNDS * 20_000

const launch = appsPerTest()

const racer = (dir: string, id: string) => spawnRacer({ keyFile: TEST_KEY, dir }, id, PER_ROUND)

describe('one writer per session', () => {
  it(`two processes racing to open a session: one writes, the other is refused and writes nothing (${ROUNDS} rounds)`, async () => {
    const dir = await tempDir()
    const app = await launch(dir)
    const { id, file } = await app.sessions.create({ cwd: dir })
    const size = async () => (await fs.stat(file)).size
    await app.fiber.dispose()
    let expected = 1
    for (let round = 0; round < ROUNDS; round++) {
      const racers = [racer(dir, id), racer(dir, id)]
      const firsts = await Promise.all(racers.map((r) => r.first))
      const winners = racers.filter((_, i) => firsts[i] === 'opened')
      const losers = racers.filter((_, i) => firsts[i] !== 'opened')
      expect(winners, firsts.join(' | ')).toHaveLength(1)
      const [winner] = winners
      const [loser] = losers
      // The refusal names the holder, and the refused process has not touched the file.
      const before = await size()
      expect(firsts[racers.indexOf(loser)]).toMatch(new RegExp(`^refused SESSION_LOCKED session ${id} is open for writing by pid ${winner.pid} on ${os.hostname()} since \\d{4}-\\d\\d-\\d\\dT`))
      expect(await loser.exit).toBe(64)
      expect(await size()).toBe(before)
      winner.go()
      expect(await winner.exit).toBe(0)
      expected += PER_ROUND
      const lines = await readLines(file)
      expect(lines).toHaveLength(expected)
      expect(lines.slice(-PER_ROUND).map((l) => [l.data.pid, l.data.i])).toEqual(Array.from({ length: PER_ROUND }, (_, i) => [winner.pid, i]))
    }
    expect(await logFiles(dir)).toEqual([path.basename(file), `${path.basename(file)}.seal`])
  }, RACE_TIMEOUT)

  it('takes over the lock of a writer that was killed, at once', async () => {
    const dir = await tempDir()
    const app = await launch(dir)
    const { id, file } = await app.sessions.create({ cwd: dir })
    await app.fiber.dispose()
    const crashed = racer(dir, id)
    expect(await crashed.first).toBe('opened')
    process.kill(crashed.pid, 'SIGKILL')
    await crashed.exit
    expect(JSON.parse(await fs.readFile(`${file}.lock`, 'utf8'))).toMatchObject({ pid: crashed.pid })
    const next = await launch(dir)
    const session = await next.sessions.open(id)
    session.append('test/item', {})
    await next.sessions.close(session)
    await expect(fs.stat(`${file}.lock`)).rejects.toMatchObject({ code: 'ENOENT' })
  }, 30_000)

  it('refuses a second writer in the same directory from a live holder, and readers never need the lock', async () => {
    const dir = await tempDir()
    const a = await launch(dir)
    const session = await a.sessions.create({ cwd: dir })
    session.append('test/item', { n: 1 })
    await a.sessions.flush(session)
    const holder = racer(dir, session.id)
    expect(await holder.first).toMatch(/^refused SESSION_LOCKED .* by pid \d+ /)
    expect(await holder.exit).toBe(64)
    // Another app in this process stands for a reader elsewhere: read-only opens and listing work.
    const b = await launch(dir)
    const read = await b.sessions.open(session.id, { readOnly: true })
    expect(read.records).toHaveLength(2)
    expect((await b.sessions.list()).map((s) => s.id)).toEqual([session.id])
    const locked = b.sessions.open(session.id)
    await expect(locked).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
  })

  it('takes over a lock file whose holder pid no longer runs, and one that is unreadable and old', async () => {
    const dir = await tempDir()
    const app = await launch(dir)
    const { id, file } = await app.sessions.create({ cwd: dir })
    await app.fiber.dispose()
    const dead = spawn(process.execPath, ['-e', ''])
    await once(dead, 'exit')
    await fs.writeFile(`${file}.lock`, JSON.stringify({ pid: dead.pid, host: os.hostname(), since: 1, token: 'x' }))
    const next = await launch(dir)
    await next.sessions.close(await next.sessions.open(id))
    await fs.writeFile(`${file}.lock`, '')
    const old = new Date(Date.now() - 60_000)
    await fs.utimes(`${file}.lock`, old, old)
    await next.sessions.close(await next.sessions.open(id))
    expect(await logFiles(dir)).toEqual([path.basename(file), `${path.basename(file)}.seal`])
  })
})
