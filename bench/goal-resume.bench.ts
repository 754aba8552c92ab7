// Resuming a goal after 10 rounds and after 1,000: a goal runs its rounds in one composition (the core
// plugins, the goal's round driver and budget meter, loaded from a cordis.yml by the real loader; only the
// model is scripted, with a context window small enough that the history is compacted every few dozen rounds),
// then a fresh composition on the same sessions resumes it. Printed per run: the rounds' wall time, the
// log's size and records, the records the live session held at most while it ran (it lets go of what precedes
// each checkpoint), and the resume's time (median of 5), heap added and records held, with the ratio of the
// long goal's resume to the short one's, measured in the same run. Target: the same cost (ratio near 1).
// Run alone: node --import tsx bench/goal-resume.bench.ts [rounds ...] [--quick]
import { mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { COMPACTION_INSTRUCTION } from '@goalkeeper/agent-loop'
import type { ScriptedProvider } from '@goalkeeper/model'
import { formatReport, Loader } from '@goalkeeper/loader'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const QUICK = process.argv.includes('--quick')
const OBJECTIVE = 'Keep a long-running log of observations about the workspace'
const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6
const mib = (bytes: number) => bytes / 2 ** 20

function yml(dir: string) {
  const entry = (id: string, name: string, config?: string) => `- id: ${id}\n  name: '${name}'${config ? `\n  config: ${config}` : ''}\n`
  return [
    entry('session-store', '@goalkeeper/session-jsonl', `{ dir: ${JSON.stringify(path.join(dir, 'sessions'))} }`),
    entry('session', '@goalkeeper/session', `{ keyFile: ${JSON.stringify(path.join(dir, 'session.key'))} }`),
    entry('model', '@goalkeeper/model', '{ scripted: { contextWindow: 8000 } }'),
    entry('tools', '@goalkeeper/tools'),
    entry('workspace-tools', '@goalkeeper/workspace-tools', `{ root: ${JSON.stringify(dir)} }`),
    entry('agent-loop', '@goalkeeper/agent-loop'),
    entry('goal', '@goalkeeper/goal'),
    entry('tool-goal', '@goalkeeper/tool-goal'),
    entry('goal-session', '@goalkeeper/goal-session'),
    entry('goal-budget', '@goalkeeper/goal-budget'),
  ].join('')
}

async function compose(dir: string): Promise<{ root: Context; dispose: () => Promise<void> }> {
  const root = new Context()
  const loader = new Loader(root, { file: path.join(dir, 'cordis.yml'), env: {} })
  const report = await loader.load()
  if (!report.ok) throw new Error(formatReport(report).join('\n'))
  return { root, dispose: () => loader.dispose() }
}

const answer = (request: { system?: string; messages: { role: string }[] }) => {
  if (request.system === COMPACTION_INSTRUCTION) return { text: 'Rounds so far each wrote a long observation.' }
  return { text: `Observation: ${'lorem ipsum dolor sit amet '.repeat(60)}`, usage: { inputTokens: 100, outputTokens: 50 } }
}

async function goalOf(rounds: number) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-goal-resume-'))
  await symlink(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  await writeFile(path.join(dir, 'cordis.yml'), yml(dir))
  try {
    const first = await compose(dir)
    const { root } = first
    const scripted = root.models.get('scripted') as ScriptedProvider
    scripted.reset(Array.from({ length: rounds * 3 + 50 }, () => answer))
    const agent = await root.agents.create({ model: 'scripted', cwd: dir })
    let most = 0
    root.on('session/event', (session) => {
      if (session.id === agent.id) most = Math.max(most, session.records.length)
    })
    const settled = new Promise<void>((resolve) => root.on('goal/changed', (changed, change) => {
      if (changed.id === agent.id && change.goal && change.goal.phase !== 'active') resolve()
    }))
    const started = process.hrtime.bigint()
    root.goals.create(agent, { objective: OBJECTIVE, maxGoalRounds: rounds })
    await settled
    await agent.whenIdle()
    const runMs = ms(started)
    const records = agent.session.firstSeq + agent.session.records.length
    const { id, file } = agent.session
    await first.dispose()
    const size = (await stat(file)).size

    const second = await compose(dir)
    const times: number[] = []
    let heap = 0
    let held = 0
    for (let i = 0; i < 5; i++) {
      globalThis.gc?.()
      const before = process.memoryUsage().heapUsed
      const start = process.hrtime.bigint()
      const resumed = await second.root.agents.resume(id, { model: 'scripted' })
      times.push(ms(start))
      heap = Math.max(heap, process.memoryUsage().heapUsed - before)
      held = resumed.session.records.length
      const goal = second.root.goals.get(resumed)
      if (goal?.roundsStarted !== rounds) throw new Error(`resumed goal has ${goal?.roundsStarted} rounds, not ${rounds}`)
      await resumed.dispose()
    }
    await second.dispose()
    times.sort((a, b) => a - b)
    return { rounds, runMs, records, size, most, resumeMs: times[2], heap, held }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

export async function run(list = QUICK ? [10, 100] : [10, 1000]) {
  let baseline: number | undefined
  // Once untimed: the first composition of the process loads and compiles what every later one reuses.
  await goalOf(3)
  console.log('rounds  run time  log             records  most held  resume (median of 5)  heap added  records held')
  for (const rounds of list) {
    const r = await goalOf(rounds)
    baseline ??= r.resumeMs
    console.log(`${String(r.rounds).padStart(6)}  ${(r.runMs / 1000).toFixed(1).padStart(6)} s  ${mib(r.size).toFixed(1).padStart(7)} MiB  ${String(r.records).padStart(11)}  ${String(r.most).padStart(9)}  ${r.resumeMs.toFixed(0).padStart(8)} ms (${(r.resumeMs / baseline).toFixed(2)}x)  ${mib(r.heap).toFixed(1).padStart(6)} MiB  ${String(r.held).padStart(12)}`)
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2).filter((arg) => arg !== '--quick')
  await run(args.length ? args.map(Number) : undefined)
}
