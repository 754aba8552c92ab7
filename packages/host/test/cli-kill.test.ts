// A goal run SIGKILLed at random points (the moment a model call of a goal round begins, picked by a
// fixed-seed fast-check plan), then resumed until it ends: no round number is ever admitted twice, since a
// round's admission is on disk before its first model call.
import { existsSync } from 'node:fs'
import { readFile, rm, writeFile } from 'node:fs/promises'
import path from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, readSession, sessionIdOf, start, useProject } from '@goalkeeper/test-kit'

const project = useProject()
const SEED = 4242
const MAX_ROUNDS = 5

// Each process counts its model calls and notes, outside the session, which round each call is for; at the
// call `kill-at` names it SIGKILLs itself, the moment the call begins. Rounds only talk: one call each. The
// session writes behind by a minute here, so only an explicit flush puts a round's admission on disk
// before its call (as a loaded machine may delay the write-behind).
const script = `
import { readFileSync } from 'node:fs'
let calls = 0
export default many((request) => {
  calls++
  appendFileSync(path.join(dir, 'calls'), roundOf(request) + '\\n')
  const at = Number(existsSync(path.join(dir, 'kill-at')) ? readFileSync(path.join(dir, 'kill-at'), 'utf8') : 0)
  if (calls === at) {
    writeFileSync(path.join(dir, 'killed'), String(roundOf(request)))
    process.kill(process.pid, 'SIGKILL')
  }
  return { text: 'Round ' + roundOf(request) + ' done.' }
})`

describe('a goal run killed at any moment', { timeout: CLI_TIMEOUT * 2 }, () => {
  it(`never admits a round number twice after resuming (fast-check seed ${SEED})`, async () => {
    console.log(`fast-check seed ${SEED}`)
    let kills = 0
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }), async (plan) => {
        const p = await project({ script, config: { session: { flushDelayMs: 60_000 } } })
        // The project directory is the test's: each run of the property starts its own goal and call list.
        await rm(path.join(p.dir, 'calls'), { force: true })
        let id: string | undefined
        for (const at of [...plan, 0]) {
          await rm(path.join(p.dir, 'killed'), { force: true })
          await writeFile(path.join(p.dir, 'kill-at'), String(at))
          const args = id ? ['goal', '--session', id] : ['goal', 'Count the rounds', '--max-rounds', String(MAX_ROUNDS)]
          const child = start([...p.globals, ...args])
          await child.exit
          // Unless the run ended before it made that many calls (the goal ran out of rounds).
          if (existsSync(path.join(p.dir, 'killed'))) {
            expect(child.child.signalCode).toBe('SIGKILL')
            kills++
          }
          id ??= sessionIdOf(child.stderr())
        }
        // No round's model call happened twice: a round cut by the kill used its number for good.
        const called = (await readFile(path.join(p.dir, 'calls'), 'utf8')).split('\n').filter(Boolean).map(Number)
        expect(new Set(called).size, `rounds called: ${called}`).toBe(called.length)
        const records = await readSession(p, id!)
        const rounds = records.filter((record) => record.type === 'user/message' && record.data.source?.kind === 'goal').map((record) => record.data.source.round)
        // Every round number once, in order: a round cut by the kill used its number, and the next one did not reuse it.
        expect(rounds).toEqual(rounds.map((_, index) => index + 1))
        expect(rounds.length).toBe(MAX_ROUNDS)
        const last = records.filter((record) => record.type === 'goal/change').at(-1)!.data
        expect(last.goal).toMatchObject({ roundsStarted: MAX_ROUNDS, phase: 'blocked' })
      }),
      { seed: SEED, numRuns: 3, endOnFailure: true },
    )
    expect(kills).toBeGreaterThan(0)
  })
})
