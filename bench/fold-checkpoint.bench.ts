// What carrying the kept folds' state in every checkpoint costs, and what it saves chat's /cost, /diff and
// /resume. One session of turns (a model call with usage and a tool call each), a checkpoint every 10,000
// records; the same checkpoint written with and without the host's kept folds (the listing's goal and
// worker, the totals), and the totals of the session once it let go of its head (continued from the last
// checkpoint) against the totals of a whole read-only replay of its log (what it would take without them).
// Run alone: node --import tsx bench/fold-checkpoint.bench.ts [records] [--quick]
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { Context } from 'cordis'
import { foldSession, type Session } from '@goalkeeper/session'
import { LISTING_FOLDS } from '../packages/host/src/listing-folds.ts'
import { sessionTotalsFold } from '../packages/host/src/commands/render/totals.ts'
import { median, withSessions } from './session-figures.ts'

const QUICK = process.argv.includes('--quick')
const EVERY = 10_000
const MAX_BYTES = 2 ** 32
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const totals = sessionTotalsFold(() => undefined)

/** Appends turns until `records`: each a model call with usage, a tool call and its result. */
function turns(session: Session, sessions: Context['sessions'], records: number, from = 1, due = true) {
  let turn = from
  while (session.records.at(-1)!.seq < records) {
    session.append('turn/start', { turn })
    session.append('assistant/message', { turn, step: 1, text: 'working', toolCalls: [], usage: { inputTokens: 1000 + turn, outputTokens: 50, cachedInputTokens: 800 } })
    session.append('tool/call', { turn, step: 1, callId: `c${turn}`, name: 'read_file', arguments: '{"path":"a.txt"}' })
    session.append('tool/result', { turn, step: 1, callId: `c${turn}`, ok: true, content: 'line\n'.repeat(20) })
    session.append('turn/end', { turn, outcome: { kind: 'completed' } })
    turn++
    if (due && sessions.checkpointDue(session)) sessions.checkpoint(session, 'interval')
  }
  return turn
}

/**
 * Median times of writing a checkpoint of a session holding `EVERY` records, without and with the kept folds:
 * two services side by side, their checkpoints timed in turn, so both see the same load and warm code.
 */
async function checkpointCosts(dir: string): Promise<[bare: number, kept: number]> {
  return withSessions(path.join(dir, 'bare'), MAX_BYTES, (bare) => withSessions(path.join(dir, 'kept'), MAX_BYTES, async (kept) => {
    kept.sessions.keepFolds({ ...LISTING_FOLDS, totals })
    const sessions = [bare, kept].map((ctx) => ctx.sessions)
    const opened = await Promise.all(sessions.map((service) => service.create({ cwd: dir })))
    const next = [1, 1]
    const times: number[][] = [[], []]
    // Each checkpoint follows `EVERY` records since the last, as `checkpointEvery` has it: the folds go over them.
    for (let round = 1; round <= 11; round++) {
      for (const i of [0, 1]) {
        next[i] = turns(opened[i], sessions[i], round * EVERY, next[i], false)
        await sessions[i].flush(opened[i])
        const start = process.hrtime.bigint()
        sessions[i].checkpoint(opened[i], 'interval')
        times[i].push(ms(start))
        await sessions[i].flush(opened[i])
      }
    }
    await Promise.all(opened.map((session, i) => sessions[i].close(session)))
    return [median(times[0]), median(times[1])]
  }))
}

export async function run(records = QUICK ? 30_000 : 200_000) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-fold-checkpoint-'))
  try {
    console.log(`kept folds in checkpoints (the machine is shared: compare the ratios, not the times)`)
    const [bare, kept] = await checkpointCosts(dir)
    console.log(`  a checkpoint of ${EVERY.toLocaleString('en')} held records: ${bare.toFixed(2)} ms without kept folds, ${kept.toFixed(2)} ms with the host's (${(kept / bare).toFixed(2)}x)`)
    await withSessions(path.join(dir, 'long'), MAX_BYTES, async (ctx) => {
      ctx.sessions.keepFolds({ ...LISTING_FOLDS, totals })
      const session = await ctx.sessions.create({ cwd: dir })
      const next = turns(session, ctx.sessions, records)
      await ctx.sessions.flush(session)
      turns(session, ctx.sessions, records + 5, next)
      const heldTimes: number[] = []
      let held
      for (let i = 0; i < 5; i++) {
        const start = process.hrtime.bigint()
        held = foldSession(session, totals)
        heldTimes.push(ms(start))
      }
      await ctx.sessions.close(session)
      const start = process.hrtime.bigint()
      const whole = await ctx.sessions.open(session.id, { readOnly: true })
      const run = totals.start()
      for (const record of whole.records) run.add(record)
      const replayed = run.result()
      const wholeMs = ms(start)
      await ctx.sessions.close(whole)
      const same = JSON.stringify(replayed) === JSON.stringify(held!.result)
      console.log(`  totals of ${records.toLocaleString('en')} records, held from record ${session.firstSeq.toLocaleString('en')}: ${median(heldTimes).toFixed(2)} ms continued from the last checkpoint, ${wholeMs.toFixed(0)} ms from a whole replay (${(wholeMs / median(heldTimes)).toFixed(0)}x); the same figures: ${same}`)
    })
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

await run(process.argv.slice(2).find((arg) => /^\d+$/.test(arg)) ? Number(process.argv.slice(2).find((arg) => /^\d+$/.test(arg))) : undefined)
