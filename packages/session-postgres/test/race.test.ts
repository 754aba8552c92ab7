import os from 'node:os'
import { expect, it } from 'vitest'
import { testDatabase } from '@goalkeeper/test-kit'
import { racer as spawnRacer } from '../../session/test/fixtures/racer.ts'
import { appsPerTest, KEY } from './helpers.ts'

const ROUNDS = 8
const PER_ROUND = 20

const db = testDatabase()
const launch = appsPerTest()

const racer = (id: string) => spawnRacer({ database: db.url, key: KEY }, id, PER_ROUND)

const rowsOf = async (id: string) => (await db.query('SELECT line FROM goalkeeper_session_records WHERE session_id = $1 ORDER BY seq', [id])).rows.map((row) => JSON.parse(row.line))

it(`two processes racing to open a session of the database: one writes, the other is refused naming it and writes nothing (${ROUNDS} rounds)`, async () => {
  const app = await launch(db.url)
  const { id } = await app.sessions.create({ cwd: '/work' })
  await app.fiber.dispose()
  let expected = 1
  for (let round = 0; round < ROUNDS; round++) {
    const racers = [racer(id), racer(id)]
    const firsts = await Promise.all(racers.map((r) => r.first))
    const winners = racers.filter((_, i) => firsts[i] === 'opened')
    expect(winners, firsts.join(' | ')).toHaveLength(1)
    const [winner] = winners
    const loser = racers.find((r) => r !== winner)!
    expect(firsts[racers.indexOf(loser)]).toMatch(new RegExp(`^refused SESSION_LOCKED session ${id} is open for writing by pid ${winner.pid} on ${os.hostname()} \\(writer [0-9a-f]{6}\\)`))
    expect(await loser.exit).toBe(64)
    expect(await rowsOf(id)).toHaveLength(expected)
    winner.go()
    expect(await winner.exit).toBe(0)
    expected += PER_ROUND
    const rows = await rowsOf(id)
    expect(rows.map((row) => row.seq)).toEqual([...Array(expected).keys()])
    expect(rows.slice(-PER_ROUND).map((row) => [row.data.pid, row.data.i])).toEqual(Array.from({ length: PER_ROUND }, (_, i) => [winner.pid, i]))
  }
  // Every writer gave its lease back.
  expect((await db.query('SELECT count(*)::int AS n FROM goalkeeper_session_leases')).rows[0].n).toBe(0)
}, 240_000)
