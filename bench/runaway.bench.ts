// Runaway prevention, measured: pointless patterns a model falls into and legitimate runs that look like
// them, each run as a goal through the repository's own cordis.yml (the real loader, every default policy
// plugin, the real workspace tools and round driver); only the model is scripted. For each pattern it prints
// the model calls wasted (from the first pointless one on), what stopped the run and the goal's final state;
// for each legitimate run, whether it was stopped. Targets: every pattern <= 5 wasted calls, no legitimate
// run stopped. Run alone: node --import tsx bench/runaway.bench.ts
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalState } from '@goalkeeper/goal'
import type { ModelRequest, ScriptedProvider, ScriptResponse, ScriptToolCall } from '@goalkeeper/model'
import { loadRepoComposition } from './repo-composition.ts'

/** A run that nothing stopped ends here: the script answers with an error, which blocks the goal (turn-error). */
const MAX_CALLS = 150
const WASTE_TARGET = 5

interface Scenario {
  name: string
  /** The 1-based model call from which on every call is pointless; absent for a legitimate run. */
  firstPointless?: number
  /** Workspace files written before the run. */
  files?: Record<string, string>
  /** The reply to model call `n` (1-based); `complete()` is the call that completes the goal. */
  reply(n: number, complete: () => ScriptResponse, run: RunView): ScriptResponse
}

/** What a row's script may look at or act on while it answers a model call. */
interface RunView {
  agent: Agent
  root: Context
  /** The text of the last user message the model call carries. */
  lastUser: string
}

const call = (name: string, args: Record<string, unknown>): ScriptToolCall => ({ name, arguments: args })
const tools = (...calls: ScriptToolCall[]): ScriptResponse => ({ toolCalls: calls })
const read = (file: string, extra: Record<string, unknown> = {}) => tools(call('read_file', { path: file, ...extra }))
const shell = (command: string, extra: Record<string, unknown> = {}) => tools(call('run_command', { command, ...extra }))
const say = (text: string): ScriptResponse => ({ text })
/** A command whose output changes on every run: a counter kept in `file`. */
const counter = (file: string, label: string) => `n=$(cat ${file} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${file}; echo "${label} $n"`
const letters = (count: number) => Array.from({ length: count }, (_, i) => `${String.fromCharCode(97 + i)}.txt`)
const filesOf = (names: string[]) => Object.fromEntries(names.map((name) => [name, `contents of ${name}\n`]))
/** A legitimate run: `steps` scripted calls, then the goal is completed and the wrap-up answered. */
const legit = (steps: (n: number) => ScriptResponse, count: number) => (n: number, complete: () => ScriptResponse) =>
  n <= count ? steps(n) : n === count + 1 ? complete() : say('The goal is complete.')

const patterns: Scenario[] = [
  { name: 'the same read, again and again', firstPointless: 2, files: filesOf(['a.txt']), reply: () => read('a.txt') },
  { name: 'volatile arguments: end_line grows', firstPointless: 2, files: filesOf(['a.txt']), reply: (n) => read('a.txt', { end_line: 100 + n }) },
  { name: 'volatile arguments: timeout_ms changes', firstPointless: 2, files: filesOf(['a.txt']), reply: (n) => shell('cat a.txt', { timeout_ms: 1000 * n }) },
  {
    name: 'same failing command, changing duration', firstPointless: 2,
    reply: () => shell('n=$(cat .n 2>/dev/null || echo 0); echo $((n+1)) > .n; sleep 0.$((n*2)); echo "3 tests failed"; exit 1'),
  },
  { name: 'text-only rounds', firstPointless: 1, reply: () => say("I'll keep working on it.") },
  { name: 'empty replies', firstPointless: 1, reply: () => ({}) },
  { name: 'rounds that only read, then talk', firstPointless: 3, files: filesOf(['a.txt']), reply: (n) => (n % 2 ? read('a.txt') : say('Still investigating.')) },
  { name: 'A-B cycle', firstPointless: 3, files: filesOf(letters(2)), reply: (n) => read(letters(2)[(n - 1) % 2]) },
  { name: '3-cycle', firstPointless: 4, files: filesOf(letters(3)), reply: (n) => read(letters(3)[(n - 1) % 3]) },
  { name: '4-cycle', firstPointless: 5, files: filesOf(letters(4)), reply: (n) => read(letters(4)[(n - 1) % 4]) },
  { name: '6-cycle', firstPointless: 7, files: filesOf(letters(6)), reply: (n) => read(letters(6)[(n - 1) % 6]) },
  {
    name: 'alternating fail/success (same failure, new reads)', firstPointless: 3, files: filesOf(letters(20)),
    reply: (n) => (n % 2 ? shell('cat missing.txt') : read(letters(20)[n / 2 - 1])),
  },
  { name: 'repeated timeout', firstPointless: 2, reply: () => shell('sleep 5', { timeout_ms: 300 }) },
  {
    name: 'different commands that all time out', firstPointless: 2,
    reply: (n) => shell(['sleep 5', 'tail -f /dev/null', 'while :; do :; done', 'sleep 9; ls', 'cat /dev/zero > /dev/null', 'yes > /dev/null'][(n - 1) % 6], { timeout_ms: 300 }),
  },
  {
    name: 'sleep N, then the same status', firstPointless: 2, files: { 'status.txt': 'pending\n' },
    reply: (n) => shell(`sleep 0.0${n % 10} && cat status.txt`),
  },
  {
    name: 'one failing command, quoting and spacing varied', firstPointless: 2,
    reply: (n) => shell([`grep "todo" notes.txt`, `grep 'todo' notes.txt`, `grep  "todo"  notes.txt`, `grep 'todo'   notes.txt`][(n - 1) % 4]),
  },
  {
    name: 'near-identical commands, timestamp comments', firstPointless: 2, files: filesOf(['a.txt']),
    reply: (n) => shell(`cat a.txt  # checked at 2024-05-01T10:${String(n).padStart(2, '0')}:00Z`),
  },
  {
    name: 'the same sentence, a new search pattern each time, nothing found', firstPointless: 1, files: filesOf(['a.txt']),
    reply: (n) => ({ text: 'Let me search for the retry policy.', toolCalls: [call('search', { pattern: `retry_policy_${n}` })] }),
  },
  {
    name: 'a missing file (new name each time) alternating with the same listing', firstPointless: 2, files: filesOf(['a.txt']),
    reply: (n) => (n % 2 ? tools(call('list_dir', { path: '.' })) : read(`notes/todo-${n}.md`)),
  },
]

const legitimate: Scenario[] = [
  { name: 'polling with changing output x10', reply: legit(() => shell(counter('.progress', 'build step')), 10) },
  {
    name: '20 distinct edits',
    files: { 'list.txt': Array.from({ length: 20 }, (_, i) => `item ${i + 1}: todo`).join('\n') + '\n' },
    reply: legit((n) => tools(call('edit_file', { path: 'list.txt', old_string: `item ${n}: todo`, new_string: `item ${n}: done` })), 20),
  },
  {
    name: 'a test failing twice, then passing',
    files: { 'a.txt': 'broken\n', 'test.sh': 'grep -q fixed-2 a.txt || { echo "FAIL: a.txt is not fixed"; exit 1; }\necho PASS\n' },
    reply: legit((n) => [
      shell('sh test.sh'), tools(call('write_file', { path: 'a.txt', content: 'fixed-1\n' })),
      shell('sh test.sh'), tools(call('write_file', { path: 'a.txt', content: 'fixed-2\n' })),
      shell('sh test.sh'),
    ][n - 1], 5),
  },
  {
    name: 're-reading a file after editing it (x5)', files: { 'a.txt': 'version 0\n' },
    reply: legit((n) => (n % 2
      ? read('a.txt')
      : tools(call('edit_file', { path: 'a.txt', old_string: `version ${n / 2 - 1}`, new_string: `version ${n / 2}` }))), 10),
  },
  {
    name: 'six fixtures with the same contents, read in a row', files: Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`test${i + 1}.txt`, 'fixture\n'])),
    reply: legit((n) => read(`test${n}.txt`), 6),
  },
  { name: '40 distinct successful steps', files: filesOf(Array.from({ length: 40 }, (_, i) => `f${i}.txt`)), reply: legit((n) => read(`f${n - 1}.txt`), 40) },
  { name: 'a two-step loop whose results both change x6', reply: legit((n) => shell(n % 2 ? counter('.a', 'built revision') : counter('.b', 'suites passing:')), 12) },
  {
    name: 'two rounds of reading only, then the work', files: filesOf(letters(2)),
    reply: legit((n) => [read('a.txt'), say('Read a.txt; b.txt next round.'), read('b.txt'), say('Both read; writing next round.'),
      tools(call('write_file', { path: 'NOTES.md', content: 'a and b\n' }))][n - 1], 5),
  },
  {
    name: 'rounds of five new reads and a summary x8',
    files: filesOf(Array.from({ length: 40 }, (_, i) => `f${i}.txt`)),
    reply: legit((n) => (n % 6 ? read(`f${n - Math.ceil(n / 6)}.txt`) : say(`Round ${n / 6}: summarised five files.`)), 48),
  },
  {
    name: 'three config file names tried, then the one that exists', files: { 'app.conf': 'port = 8080\n' },
    reply: legit((n) => read(['config.json', 'config.yaml', 'config.toml', 'app.conf'][n - 1]), 4),
  },
  {
    name: 'fix loop: 6 edits, the test output changes each time',
    files: { 'test.sh': 'n=$(grep -c ok a.txt); [ "$n" -ge 6 ] && echo PASS || { echo "$((6 - n)) checks failing"; exit 1; }\n' },
    reply: legit((n) => (n % 2 ? shell('sh test.sh') : tools(call('write_file', { path: 'a.txt', content: 'ok\n'.repeat(n / 2) }))), 13),
  },
]

const HUMAN = 'Quick question: which file are you on?'
/** Reads distinct files: work that is not a loop, so only the interruption under test can end it early. */
const distinctRead = (n: number) => read(`f${n % 40}.txt`)
const forty = filesOf(Array.from({ length: 40 }, (_, i) => `f${i}.txt`))

/**
 * Human input and the wrap-up, each row measured from one model call `at`: the row's figure is the number
 * of model calls of the goal round made after it, before the human turn started (or at all).
 */
interface Interruption extends Scenario {
  /** The model call during which the human acts, or which completes the goal. */
  at: number
  /** What the figure counts. */
  counts: string
  /** The figure, from the run's model calls. */
  figure(calls: number, requests: readonly string[]): number
  target: number
}

const interruptions: Interruption[] = [
  {
    // The round would read 12 files and then stop; a person asks something during its 3rd model call.
    name: 'human message mid-round', at: 3, target: 0, files: forty,
    counts: 'round calls after the message, before the human turn',
    reply: (n, complete, { agent, lastUser }) => {
      if (lastUser === HUMAN) return say('On f2.txt; continuing after this.')
      if (n === 3) agent.send({ content: HUMAN })
      return n <= 12 ? distinctRead(n) : n === 13 ? say('Twelve files read.') : complete()
    },
    figure: (_calls, requests) => requests.indexOf(HUMAN) - 3,
  },
  {
    // `/goal pause` (what chat and ACP run) while the round's 3rd model call is under way.
    name: '/goal pause mid-round', at: 3, target: 0, files: forty,
    counts: 'round calls after the pause',
    reply: (n, _complete, { agent, root }) => {
      if (n === 3) root.goals.pause(agent, root.goals.get(agent)!)
      return distinctRead(n)
    },
    figure: (calls) => calls - 3,
  },
  {
    // The model completes the goal at its 3rd call, then goes on calling tools instead of wrapping up.
    name: 'tools after an autonomous complete', at: 3, target: 1, files: forty,
    counts: 'model calls after the complete (the wrap-up included)',
    reply: (n, complete) => (n === 3 ? complete() : distinctRead(n)),
    figure: (calls) => calls - 3,
  },
]

interface Outcome { calls: number; goal: GoalState | undefined; hung: boolean; requests: string[] }

/** Which guard (and which of its detectors) a block names. */
function stoppedBy(goal: GoalState | undefined): string {
  const reason = goal?.blockedReason
  if (!reason) return '-'
  const detail = [
    [/same error/, 'same error'], [/cycle of/i, 'cycle'], [/kept changing/, 'polling'], [/was called \d+ times/, 'repeat'],
    [/goal rounds? in a row/, 'idle rounds'], [/replied \d+ times/, 'monologue'],
    [/of the last \d+ steps/, 'failure window'], [/consecutive steps/, 'consecutive failures'],
    [/already made in this goal/, 'block'], [/said the same thing/, 'echo'], [/since the last success that changed anything/, 'stale failures'],
  ].find(([pattern]) => (pattern as RegExp).test(reason.message))?.[1]
  return detail ? `${reason.code} (${detail})` : reason.code
}

async function runScenario(root: Context, dir: string, scenario: Scenario, index: number): Promise<Outcome> {
  const workspace = path.join(dir, `workspace-${index}`)
  await mkdir(workspace)
  for (const [name, content] of Object.entries(scenario.files ?? {})) await writeFile(path.join(workspace, name), content)
  const agent: Agent = await root.agents.create({ model: 'scripted', cwd: workspace })
  const complete = (): ScriptResponse => {
    const goal = root.goals.get(agent)!
    return tools(call('update_goal', { goal_id: goal.id, revision: goal.revision, action: 'complete' }))
  }
  const scripted = root.models.get('scripted') as ScriptedProvider
  const lastUser = (request: ModelRequest) => request.messages.filter((m) => m.role === 'user').at(-1)?.content.map((b) => b.text ?? '').join('') ?? ''
  scripted.reset(Array.from({ length: MAX_CALLS + 1 }, (_, i) => (request: ModelRequest) => (i < MAX_CALLS
    ? scenario.reply(i + 1, complete, { agent, root, lastUser: lastUser(request) })
    : { kind: 'error', code: 'BENCH_CAP', message: `nothing stopped the run within ${MAX_CALLS} model calls` })))
  const settled = new Promise<void>((resolve) => {
    const off = root.on('goal/changed', (changed, change) => {
      // A human turn that preempted a round is not the end of the run: only the goal settling is.
      if (changed.id === agent.id && change.goal && change.goal.phase !== 'active') {
        off()
        resolve()
      }
    })
  })
  root.goals.create(agent, { objective: `runaway bench: ${scenario.name}` })
  let timer: NodeJS.Timeout | undefined
  const hung = await Promise.race([
    settled.then(() => false),
    new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(true), 120_000) }),
  ])
  clearTimeout(timer)
  if (hung) agent.cancel('user')
  await agent.whenIdle()
  const outcome = { calls: scripted.requests.length, goal: root.goals.get(agent), hung, requests: scripted.requests.map(lastUser) }
  await agent.dispose()
  return outcome
}

export async function run() {
  const { root, dir, errors, dispose } = await loadRepoComposition('gk-runaway-')
  try {
    const pad = (text: string | number, width: number) => String(text).padEnd(width)
    console.log(`${pad('pattern', 54)}${pad('calls', 7)}${pad('wasted', 8)}${pad('stopped by', 40)}${pad('goal', 9)}target`)
    let index = 0
    let missed = 0
    for (const scenario of patterns) {
      const { calls, goal, hung } = await runScenario(root, dir, scenario, index++)
      const wasted = Math.max(0, calls - scenario.firstPointless! + 1)
      const ok = !hung && goal?.phase === 'blocked' && goal.blockedReason?.code !== 'turn-error' && wasted <= WASTE_TARGET
      if (!ok) missed++
      console.log(`${pad(scenario.name, 54)}${pad(calls, 7)}${pad(wasted, 8)}${pad(hung ? 'nothing (hung)' : stoppedBy(goal), 40)}${pad(goal?.phase ?? '-', 9)}${ok ? 'OK' : 'MISSED'}`)
    }
    console.log(`\n${pad('legitimate run', 54)}${pad('calls', 7)}${pad('stopped', 8)}${pad('stopped by', 40)}${pad('goal', 9)}target`)
    for (const scenario of legitimate) {
      const { calls, goal, hung } = await runScenario(root, dir, scenario, index++)
      const stopped = hung || goal?.phase !== 'complete'
      if (stopped) missed++
      console.log(`${pad(scenario.name, 54)}${pad(calls, 7)}${pad(stopped ? 'yes' : 'no', 8)}${pad(hung ? 'nothing (hung)' : stoppedBy(goal), 40)}${pad(goal?.phase ?? '-', 9)}${stopped ? 'MISSED' : 'OK'}`)
    }
    console.log(`\n${pad('human input and wrap-up', 40)}${pad('calls', 7)}${pad('figure', 8)}${pad('the figure counts', 54)}${pad('goal', 9)}target`)
    for (const scenario of interruptions) {
      const { calls, goal, hung, requests } = await runScenario(root, dir, scenario, index++)
      const figure = scenario.figure(calls, requests)
      const ok = !hung && figure >= 0 && figure <= scenario.target
      if (!ok) missed++
      console.log(`${pad(scenario.name, 40)}${pad(calls, 7)}${pad(figure, 8)}${pad(scenario.counts, 54)}${pad(goal?.phase ?? '-', 9)}${ok ? 'OK' : 'MISSED'} (<= ${scenario.target})`)
    }
    console.log(`\n${missed ? `${missed} target(s) missed` : 'every target met'}${errors.length ? `; ${errors.length} error log line(s):\n${errors.join('\n')}` : ''}`)
  } finally {
    await dispose()
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run()
