// Host CPU per turn against the length of the history, and the default composition against a bare loop.
//
// Sessions are filled with 100, 1,000, 10,000 and 100,000 records of earlier turns (a prompt, a tool call and
// its result of about 300 characters, an answer: 12 records a turn), then an agent on each runs turns of two
// steps (a tool call, then an answer). Figures are process CPU (user + system, main thread and thread pool)
// per turn; every size is measured in the same process, in alternating rounds (median of each), so all pay
// for the same heap. The model is a provider of this file that answers in constant time: the scripted
// provider keeps a copy of every request, and a real provider's serialisation of the history is the model's
// side of the cost, not the host's.
//
// Rows:
// - bare loop: session, model, tools and agent-loop, nothing else (human turns);
// - default composition: the repository's cordis.yml (demo model off), human turns;
// - default composition, goal rounds: the same, the turns being the rounds of one goal.
// Ratios: each size against 100 records (target: within 1.2x at 100,000), and the default composition against
// the bare loop at the same size (target: within 2x).
//
// Run alone: node --import tsx bench/history.bench.ts [--quick] [--sizes 100,100000] [--only bare,default,goal]
// [--profile /tmp/turns] [--rounds 5] [--turns 40]. `--quick`: 100 and 10,000 records, fewer turns; `--profile`: a CPU
// profile of the measured turns alone, without the filling of the sessions; `--only`: a comma-separated subset of
// the rows. Rows are measured in the same rounds (interleaved), so each ratio compares figures taken under the
// same load; the machine's noise shrinks with more `--rounds` and `--turns`.
import inspector from 'node:inspector/promises'
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import type { ModelChunk, ModelProvider } from '@goalkeeper/model'
import type { Session } from '@goalkeeper/session'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import { loadRepoComposition } from './repo-composition.ts'

const argv = process.argv.slice(2)
const quick = argv.includes('--quick') || process.env.BENCH_QUICK === '1'
const option = (name: string) => {
  const index = argv.indexOf(name)
  return index >= 0 ? argv[index + 1] : undefined
}
const SIZES = (option('--sizes') ?? (quick ? '100,10000' : '100,1000,10000,100000')).split(',').map(Number)
const ONLY = option('--only')
/** `--profile PREFIX`: a CPU profile of the measured turns of each row, written to PREFIX-<time>.cpuprofile. */
const PROFILE = option('--profile')
const TURNS = Number(option('--turns') ?? (quick ? 20 : 40))
const ROUNDS = Number(option('--rounds') ?? (quick ? 3 : 5))
const MODEL = 'bench'
const RESULT = 'x'.repeat(300)

/** Letters for a number: names and results that differ without being "the same call with another number" to the guards. */
const letters = (n: number) => {
  let text = ''
  do {
    text = String.fromCharCode(97 + (n % 26)) + text
    n = Math.floor(n / 26)
  } while (n > 0)
  return text
}

/** Each turn: a step that calls `note`, then a step that answers; calls and results all differ. */
function createBenchProvider(): ModelProvider & { replies: number } {
  let served = 0
  const provider = {
    replies: 0,
    describe: () => ({ summary: 'bench answers (offline)', offline: true }),
    async *stream(): AsyncGenerator<ModelChunk> {
      const number = ++served
      provider.replies = served
      if (number % 2) {
        yield { type: 'tool-call', call: { id: `b${number}`, name: 'note', arguments: JSON.stringify({ text: `note ${letters(number)}` }) } }
        yield { type: 'usage', usage: { inputTokens: 1000, outputTokens: 20 } }
        yield { type: 'finish', reason: 'tool-calls' }
      } else {
        yield { type: 'text', text: `done ${letters(number)}` }
        yield { type: 'usage', usage: { inputTokens: 1000, outputTokens: 5 } }
        yield { type: 'finish', reason: 'stop' }
      }
    },
  }
  return provider
}

/** The bench's model and its tool: an edit (progress to the goal guards) whose results all differ. */
const benchPlugin = {
  name: 'history-bench',
  inject: ['tools', 'models'],
  apply(ctx: Context) {
    let calls = 0
    ctx.effect(() => ctx.models.register(MODEL, createBenchProvider()))
    ctx.effect(() => ctx.tools.register({
      name: 'note', kind: 'edit', description: 'Keeps a note.',
      parameters: { type: 'object', properties: { text: { type: 'string' } } },
      execute: () => `noted ${letters(++calls)} ${RESULT}`,
    }))
  },
}

/** Appends earlier turns until the session holds `size` records, as a long-lived session would. */
async function fill(ctx: Context, session: Session, size: number) {
  let turn = 0
  while (session.records.length + 12 <= size) {
    turn++
    const id = `m${turn}`
    const message = { id, content: [{ type: 'text' as const, text: `prompt ${letters(turn)}: please go on with the work` }], source: { kind: 'human' as const } }
    session.append('input/queued', { message })
    session.append('turn/start', { turn })
    session.append('user/message', message)
    session.append('step/start', { turn, step: 1 })
    const callId = `f${turn}`
    const args = JSON.stringify({ text: `earlier ${letters(turn)}` })
    session.append('assistant/message', { turn, step: 1, text: '', toolCalls: [{ id: callId, name: 'note', arguments: args }], usage: { inputTokens: 1000, outputTokens: 20 } })
    session.append('tool/call', { turn, step: 1, callId, name: 'note', arguments: args })
    session.append('tool/result', { turn, step: 1, callId, ok: true, content: `earlier ${letters(turn)} ${RESULT}` })
    session.append('step/end', { turn, step: 1 })
    session.append('step/start', { turn, step: 2 })
    session.append('assistant/message', { turn, step: 2, text: `done with ${letters(turn)}`, toolCalls: [], usage: { inputTokens: 1000, outputTokens: 5 } })
    session.append('step/end', { turn, step: 2 })
    session.append('turn/end', { turn, outcome: { kind: 'completed' } })
    if (turn % 500 === 0) await ctx.sessions.flush(session)
  }
  await ctx.sessions.flush(session)
}

const cpu = () => {
  const { user, system } = process.cpuUsage()
  return user + system
}

interface Subject {
  size: number
  agent: Agent
  samples: number[]
  /** The system (kernel) part of each sample: file writes, fsync, stat. */
  system: number[]
}

interface Figure { total: number; system: number }

/** Human turns: CPU microseconds per turn over `turns` turns. */
async function humanTurns(agent: Agent, turns: number): Promise<number> {
  const start = cpu()
  for (let i = 0; i < turns; i++) {
    agent.send({ content: `turn ${letters(i)}` })
    await agent.whenIdle()
  }
  return (cpu() - start) / turns
}

/** Goal rounds: a goal of `turns` rounds, run to its round limit; CPU microseconds per round. */
async function goalRounds(root: Context, agent: Agent, turns: number): Promise<number> {
  const settled = new Promise<void>((resolve) => {
    const off = root.on('goal/changed', (changed, change) => {
      if (changed.id === agent.id && change.goal && change.goal.phase !== 'active') {
        off()
        resolve()
      }
    })
  })
  const previous = root.goals.get(agent)
  if (previous) root.goals.clear(agent, { id: previous.id, revision: previous.revision })
  const start = cpu()
  root.goals.create(agent, { objective: `history bench ${letters(turns)}`, maxGoalRounds: turns })
  await settled
  await agent.whenIdle()
  const spent = (cpu() - start) / turns
  const goal = root.goals.get(agent)
  if (goal?.blockedReason?.code !== 'round-limit') throw new Error(`the bench goal ended ${goal?.phase} (${goal?.blockedReason?.code}: ${goal?.blockedReason?.message}), not at its round limit`)
  return spent
}

async function prepare(root: Context, cwd: string): Promise<Subject[]> {
  const subjects: Subject[] = []
  for (const size of SIZES) {
    const session = await root.sessions.create({ cwd })
    await fill(root, session, size)
    const agent = await root.agents.create({ session, model: MODEL })
    subjects.push({ size, agent, samples: [], system: [] })
  }
  return subjects
}

/** One row of the table: its agents (one a size) and how it runs a sample of turns. */
interface Row {
  name: string
  subjects: Subject[]
  run: (agent: Agent, turns: number) => Promise<number>
}

/**
 * Measures every row in the same rounds: the machine's load changes from minute to minute, and rows measured
 * one after the other would compare one load with another. Each round visits every row and size, starting at
 * another one each time (the first measured after a pause pays more: caches, the collector).
 */
async function measure(rows: Row[]) {
  const visits = rows.flatMap((row) => row.subjects.map((subject) => ({ row, subject })))
  // Warm-up: JIT, and each agent's one-time fold of its session.
  for (const { row, subject } of visits) await row.run(subject.agent, 5)
  const profiler = PROFILE ? await startProfile() : undefined
  for (let round = 0; round < ROUNDS; round++) {
    for (let index = 0; index < visits.length; index++) {
      const { row, subject } = visits[(round + index) % visits.length]
      const before = process.cpuUsage().system
      subject.samples.push(await row.run(subject.agent, TURNS))
      subject.system.push((process.cpuUsage().system - before) / TURNS)
    }
  }
  await profiler?.()
  return rows.map((row): [string, Map<number, Figure>] => [row.name, new Map(row.subjects.map((subject) => [subject.size, { total: median(subject.samples), system: median(subject.system) }]))])
}

/** Profiles the measured turns only (not the filling of the sessions); stop() writes the file. */
async function startProfile() {
  const session = new inspector.Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.start')
  return async () => {
    const { profile } = await session.post('Profiler.stop')
    const file = path.resolve(`${PROFILE}-${Date.now()}.cpuprofile`)
    await writeFile(file, JSON.stringify(profile))
    session.disconnect()
    console.log(`profile of the measured turns: ${file}`)
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

async function bare(): Promise<{ row: Row; dispose: () => Promise<void> }> {
  const h: Harness = await createHarness({ workspaceTools: false })
  try {
    await h.load(benchPlugin)
    const subjects = await prepare(h.root, h.workspace)
    return { row: { name: 'bare loop, human turns', subjects, run: humanTurns }, dispose: () => h.dispose() }
  } catch (error) {
    await h.dispose()
    throw error
  }
}

async function composed(kind: 'human' | 'goal'): Promise<{ row: Row; dispose: () => Promise<void> }> {
  const { root, dir, errors, dispose } = await loadRepoComposition('gk-history-')
  try {
    await root.plugin(benchPlugin)
    const subjects = await prepare(root, dir)
    const row: Row = kind === 'human'
      ? { name: 'default composition, human turns', subjects, run: humanTurns }
      : { name: 'default composition, goal rounds', subjects, run: (agent, turns) => goalRounds(root, agent, turns) }
    return {
      row,
      dispose: async () => {
        if (errors.length) console.log(`${row.name}: ${errors.length} error log line(s):\n${errors.slice(0, 5).join('\n')}`)
        await dispose()
      },
    }
  } catch (error) {
    await dispose()
    throw error
  }
}

export async function run() {
  const only = ONLY?.split(',')
  const wanted = (name: string) => !only || only.includes(name)
  const set: { row: Row; dispose: () => Promise<void> }[] = []
  let rows: [string, Map<number, Figure>][]
  try {
    if (wanted('bare')) set.push(await bare())
    if (wanted('default')) set.push(await composed('human'))
    if (wanted('goal')) set.push(await composed('goal'))
    rows = await measure(set.map(({ row }) => row))
  } finally {
    for (const { dispose } of set) await dispose()
  }
  const pad = (text: string | number, width: number) => String(text).padStart(width)
  console.log(`host CPU per turn (median of ${ROUNDS} rounds of ${TURNS} turns), by records already in the session`)
  console.log(`${''.padEnd(34)}${SIZES.map((size) => pad(size.toLocaleString('en'), 12)).join('')}   largest/smallest   target <= 1.2x`)
  for (const [name, figures] of rows) {
    const values = SIZES.map((size) => figures.get(size)!.total)
    const growth = values.at(-1)! / values[0]
    console.log(`${name.padEnd(34)}${values.map((value) => pad(`${(value / 1000).toFixed(3)} ms`, 12)).join('')}   ${pad(growth.toFixed(2), 8)}x          ${growth <= 1.2 ? 'OK' : 'MISSED'}`)
  }
  console.log('of which system CPU (the kernel: file writes, fsync, stat), per turn')
  for (const [name, figures] of rows) {
    console.log(`${name.padEnd(34)}${SIZES.map((size) => pad(`${(figures.get(size)!.system / 1000).toFixed(3)} ms`, 12)).join('')}`)
  }
  const bareRow = rows.find(([name]) => name.startsWith('bare'))?.[1]
  if (bareRow) {
    for (const [name, figures] of rows) {
      if (figures === bareRow) continue
      const ratios = SIZES.map((size) => figures.get(size)!.total / bareRow.get(size)!.total)
      console.log(`${`${name} / bare loop`.padEnd(58)}${ratios.map((ratio) => pad(`${ratio.toFixed(2)}x`, 8)).join('')}   target <= 2x ${ratios.every((ratio) => ratio <= 2) ? 'OK' : 'MISSED'}`)
    }
  }
  return rows
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
