// A long goal against a model server that behaves like a real one, measured: the CLI runs `goalkeeper goal`
// (the repository's cordis.yml, every default plugin, the real session files and workspace tools) against a
// local OpenAI-compatible server whose "model" works through a goal of ROUNDS rounds, one progress file a
// round. The server is the hostile part, as real ones are over hours:
// - it enforces a context limit far below the window the `openai` preset reports (128k), and refuses a larger
//   request with OpenAI's recorded `context_length_exceeded` body; it counts tokens more generously than the
//   host's 4-characters-a-token estimate, as real tokenizers do on code;
// - now and then it answers 429 with `retry-after-ms`, drops a stream after a few frames, or stalls before
//   the first frame;
// - after every compaction its model "rebuilds its plan" from the summary and redoes its last block of calls
//   (same arguments, same results) until a guard's hint reaches it, at most REDO_LIMIT times.
// Printed: compactions, overflows refused and recovered, requests over the limit after the first recovery,
// wasted calls after compactions, requests that carry the objective (all must), the largest request against
// the limit, the server's faults, wall time and the goal's end. Targets: the goal completes; no request over
// the limit after recovery; every redone block stopped by its second repetition; every request carries the
// objective. Run alone: node --import tsx bench/long-goal.bench.ts [--quick]
import { spawn } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const quick = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1'
const ROUNDS = quick ? 60 : 300
/** The server's real limit, in its own tokens; the preset says 128,000. */
const LIMIT = 16_000
/** The server's tokenizer: about 3.2 characters a token, against the host's estimate of 4. */
const serverTokens = (text: string) => Math.ceil(text.length / 3.2)
/** Files a round writes and then reads back: a block of 2 x FILES calls. */
const FILES = 4
const BLOCK = 2 * FILES
/** How many times the model redoes its last block after a compaction if nothing stops it. */
const REDO_LIMIT = 4
const OBJECTIVE_MARK = 'long-goal-bench-7f3a'
const OBJECTIVE = `Keep a progress log: for each round write progress/round-N-{a,b,c,d}.txt, read them back, and report (${OBJECTIVE_MARK}).`
/** Every Nth model request is answered with a fault. */
const FAULTS = { rateLimit: 41, drop: 59, stall: 97 }
const IDLE_TIMEOUT_MS = 1500

interface WireMessage { role: string; content?: string | null; tool_calls?: { function: { name: string; arguments: string } }[] }
interface ToolCall { name: string; arguments: Record<string, unknown> }

interface Stats {
  requests: number
  summaryRequests: number
  overflowRefusals: number
  /** Refusals that came after a request had already succeeded following an earlier refusal. */
  refusalsAfterRecovery: number
  recovered: number
  rateLimited: number
  dropped: number
  stalled: number
  withObjective: number
  roundRequests: number
  largestAccepted: number
  redoCalls: number[]
  hintsSeen: number
  completedAt?: number
}

const fileBody = (round: number, part: string) => `round ${round} part ${part}: ${`progress note ${round}-${part} `.repeat(6)}\n`

/**
 * The server's model: reads the request as a real model would (the opening goal round, the tool results of
 * this turn, a summary at the top after a compaction) and decides the next reply.
 */
class SimulatedModel {
  stats: Stats = {
    requests: 0, summaryRequests: 0, overflowRefusals: 0, refusalsAfterRecovery: 0, recovered: 0, rateLimited: 0,
    dropped: 0, stalled: 0, withObjective: 0, roundRequests: 0, largestAccepted: 0, redoCalls: [], hintsSeen: 0,
  }

  private blocks = new Map<number, ToolCall[]>()
  private lastMarker = ''
  private summaries = 0
  private pendingRefusal = false
  private recoveredOnce = false
  /** Per round: whether this round redoes the last block (it saw a new compaction), and how far it got. */
  private redo = new Map<number, { block: ToolCall[]; done: number; index: number }>()

  reply(body: { messages: WireMessage[] }, raw: string): { status: number; body?: object; frames?: object[]; fault?: 'drop' | 'stall' } {
    const n = ++this.stats.requests
    const { messages } = body
    const system = messages.find((m) => m.role === 'system')?.content ?? ''
    const tokens = serverTokens(raw)
    const summary = system.startsWith('You write the working summary')
    if (summary) this.stats.summaryRequests++
    if (tokens > LIMIT) {
      this.stats.overflowRefusals++
      if (this.recoveredOnce) this.stats.refusalsAfterRecovery++
      this.pendingRefusal = true
      return {
        status: 400,
        body: { error: { message: `Input tokens exceed the configured limit of ${LIMIT} tokens. Your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } },
      }
    }
    if (n % FAULTS.rateLimit === 0) {
      this.stats.rateLimited++
      return { status: 429, body: { error: { message: 'Rate limit reached for requests. Please try again in 50ms.', type: 'requests', code: 'rate_limit_exceeded' } } }
    }
    if (n % FAULTS.stall === 0) {
      this.stats.stalled++
      return { status: 200, fault: 'stall' }
    }
    if (this.pendingRefusal) {
      this.pendingRefusal = false
      this.stats.recovered++
      this.recoveredOnce = true
    }
    this.stats.largestAccepted = Math.max(this.stats.largestAccepted, tokens)
    const frames = summary ? this.summarise() : this.step(messages, raw)
    if (n % FAULTS.drop === 0) {
      this.stats.dropped++
      return { status: 200, frames, fault: 'drop' }
    }
    return { status: 200, frames }
  }

  private summarise(): object[] {
    const k = ++this.summaries
    return textFrames(`Summary ${k}. 1. What was done: progress files were written and read back round by round. 2. Files touched: progress/round-*-{a,b,c,d}.txt. 3. Decisions: one file set per round. 4. What remains: the next rounds of the same work.`)
  }

  private step(messages: WireMessage[], raw: string): object[] {
    this.stats.roundRequests++
    if (raw.includes(OBJECTIVE_MARK)) this.stats.withObjective++
    // The current turn opens at the last goal round prompt.
    let open = -1
    for (let i = messages.length - 1; i >= 0; i--) {
      if (messages[i].role === 'user' && (messages[i].content ?? '').startsWith('<goal_round>')) {
        open = i
        break
      }
    }
    if (open < 0) return textFrames('There is no goal round to work on.')
    const round = Number(/\nRound: (\d+)\//.exec(messages[open].content ?? '')?.[1] ?? 0)
    const turn = messages.slice(open + 1)
    const results = turn.filter((m) => m.role === 'tool')
    // A user message after a tool result inside the turn is a steered hint (a guard, a budget, the goal tool).
    const hinted = turn.some((m, i) => m.role === 'user' && turn[i - 1]?.role === 'tool')
    const marker = messages.find((m) => m.role === 'user' && /Summary of the earlier conversation|removed to fit the context window/.test(m.content ?? ''))?.content ?? ''

    if (round >= ROUNDS) return this.complete(turn)

    // A compaction the model has not seen yet: it rebuilds its plan from the summary and redoes the last
    // block it remembers doing, again and again, until something tells it to stop.
    if (marker && marker !== this.lastMarker) {
      this.lastMarker = marker
      const last = this.blocks.get(round - 1) ?? this.blocks.get(round)
      if (last && !this.redo.has(round)) {
        this.redo.set(round, { block: last, done: 0, index: this.stats.redoCalls.length })
        this.stats.redoCalls.push(0)
      }
    }
    const redo = this.redo.get(round)
    if (redo && redo.done < REDO_LIMIT * BLOCK) {
      if (hinted) {
        this.stats.hintsSeen++
        redo.done = REDO_LIMIT * BLOCK
      } else {
        const call = redo.block[redo.done % BLOCK]
        redo.done++
        this.stats.redoCalls[redo.index]++
        return toolFrames([call])
      }
    }

    // The round's own work: write FILES files, read them back, report.
    const parts = ['a', 'b', 'c', 'd'].slice(0, FILES)
    // Tool results of this turn a compaction removed are gone from the request; the model then starts over.
    const done = Math.max(0, results.length - (redo ? this.stats.redoCalls[redo.index] : 0))
    const block = parts.flatMap((part): ToolCall[] => [
      { name: 'write_file', arguments: { path: `progress/round-${round}-${part}.txt`, content: fileBody(round, part) } },
    ]).concat(parts.map((part) => ({ name: 'read_file', arguments: { path: `progress/round-${round}-${part}.txt` } })))
    if (done < block.length) {
      if (done === 0) this.blocks.set(round, block)
      return toolFrames([block[done]])
    }
    return textFrames(`Round ${round}: wrote and read back ${FILES} progress files.`)
  }

  private complete(turn: WireMessage[]): object[] {
    const results = turn.filter((m) => m.role === 'tool')
    const calls = turn.flatMap((m) => m.tool_calls ?? [])
    const updated = calls.some((c) => c.function.name === 'update_goal')
    if (updated) {
      this.stats.completedAt ??= this.stats.requests
      return textFrames('Goal done: every round has its progress files.')
    }
    const readIndex = calls.map((c) => c.function.name).lastIndexOf('get_goal')
    if (readIndex < 0) return toolFrames([{ name: 'get_goal', arguments: {} }])
    const goal = JSON.parse(results[results.length - 1]?.content ?? '{}').goal
    return toolFrames([{ name: 'update_goal', arguments: { goal_id: goal.goal_id, revision: goal.revision, action: 'complete' } }])
  }
}

let callIds = 0
const chunk = (delta: object, finish: string | null = null) => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })
const usage = { choices: [], usage: { prompt_tokens: 1000, completion_tokens: 40, total_tokens: 1040 } }
const textFrames = (text: string): object[] => [chunk({ role: 'assistant', content: text.slice(0, 20) }), chunk({ content: text.slice(20) }), chunk({}, 'stop'), usage]
const toolFrames = (calls: ToolCall[]): object[] => [
  chunk({ role: 'assistant', content: null }),
  ...calls.map((call, index) => chunk({ tool_calls: [{ index, id: `call_${++callIds}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }] })),
  chunk({}, 'tool_calls'),
  usage,
]

async function startServer(model: SimulatedModel) {
  const sockets = new Set<import('node:net').Socket>()
  const server = http.createServer((request, response) => {
    let raw = ''
    request.setEncoding('utf8')
    request.on('data', (piece) => (raw += piece))
    request.on('end', () => {
      const answer = model.reply(JSON.parse(raw), raw)
      if (answer.status !== 200) {
        const headers: Record<string, string> = { 'content-type': 'application/json' }
        if (answer.status === 429) headers['retry-after-ms'] = '50'
        response.writeHead(answer.status, headers)
        return void response.end(JSON.stringify(answer.body))
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      // Headers, then silence: the provider's idle timeout ends it.
      if (answer.fault === 'stall') return void response.flushHeaders()
      const frames = answer.frames!.map((frame) => `data: ${JSON.stringify(frame)}\n\n`)
      if (answer.fault === 'drop') {
        response.write(frames.slice(0, 2).join(''))
        return void setImmediate(() => response.socket?.destroy())
      }
      response.end(`${frames.join('')}data: [DONE]\n\n`)
    })
  })
  server.on('connection', (socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy()
      server.close(() => resolve())
    }),
  }
}

/** Counts the session's records of one type. */
async function recordCounts(dir: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {}
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith('.jsonl')) continue
    for (const line of (await readFile(path.join(dir, name), 'utf8')).split('\n')) {
      const type = /"type":"([^"]+)"/.exec(line)?.[1]
      if (type) counts[type] = (counts[type] ?? 0) + 1
    }
  }
  return counts
}

export async function run() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-long-goal-'))
  const model = new SimulatedModel()
  const server = await startServer(model)
  try {
    const workspace = path.join(dir, 'workspace')
    const sessions = path.join(dir, 'sessions')
    await mkdir(workspace)
    await symlink(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
    const original = await readFile(path.join(repoRoot, 'cordis.yml'), 'utf8')
    let composition = original.replace("name: ./demo/goal-script.mjs\n", "name: ./demo/goal-script.mjs\n  disabled: true\n")
    composition = composition.replace(/- id: openai\n  name: '@goalkeeper\/model-openai'\n  config:\n    preset: openai\n/,
      `- id: openai\n  name: '@goalkeeper/model-openai'\n  config:\n    preset: openai\n    baseUrl: ${server.url}\n    idleTimeoutMs: ${IDLE_TIMEOUT_MS}\n    baseDelayMs: 10\n    maxDelayMs: 200\n`)
    if (!composition.includes(server.url) || !composition.includes('disabled: true')) throw new Error('cordis.yml no longer has the entries this bench changes')
    await writeFile(path.join(dir, 'cordis.yml'), composition)

    const env: Record<string, string> = {}
    for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !/_API_KEY$/.test(name) && !name.startsWith('npm_')) env[name] = value
    Object.assign(env, { OPENAI_API_KEY: 'sk-bench-long-goal', GOALKEEPER_SESSIONS_DIR: sessions, NO_COLOR: '1', XDG_CONFIG_HOME: path.join(dir, 'config') })
    const started = performance.now()
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'packages/host/src/cli.ts'),
      '--cwd', workspace, '--config', path.join(dir, 'cordis.yml'), 'goal', '--max-rounds', String(ROUNDS + 20), OBJECTIVE], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (piece) => (stdout += piece))
    child.stderr.on('data', (piece) => (stderr += piece))
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    const seconds = (performance.now() - started) / 1000
    const records = await recordCounts(sessions)
    const s = model.stats
    const redo = s.redoCalls
    const stoppedInTime = redo.filter((calls) => calls <= 2 * BLOCK).length
    const end = stdout.trim().split('\n').filter((line) => /goal/i.test(line)).at(-1) ?? stdout.trim().split('\n').at(-1) ?? ''
    const stderrLines = stderr.split('\n')
    const line = (label: string, value: string | number, target = '') => console.log(`${label.padEnd(44)}${String(value).padEnd(36)}${target}`)
    console.log(`rounds ${ROUNDS}, server limit ${LIMIT} tokens (preset window 128000), block of ${BLOCK} calls redone after compactions`)
    line('goal end (exit code)', `${code}`, code === 0 ? 'OK (completes)' : 'MISSED (completes)')
    line('goal summary line', end.slice(0, 80))
    line('compactions (context/compacted records)', records['context/compacted'] ?? 0)
    line('compaction lines on stderr', stderrLines.filter((l) => /compact/i.test(l)).length)
    line('model requests (summary calls)', `${s.requests} (${s.summaryRequests})`)
    line('overflows refused / recovered', `${s.overflowRefusals} / ${s.recovered}`)
    line('refusals after the first recovery', s.refusalsAfterRecovery, s.refusalsAfterRecovery === 0 ? 'OK (0)' : 'MISSED (0)')
    line('largest accepted request', `${s.largestAccepted} of ${LIMIT} tokens`)
    line('requests with the objective', `${s.withObjective}/${s.roundRequests}`, s.withObjective === s.roundRequests ? 'OK (all)' : 'MISSED (all)')
    line('redone blocks after compactions', redo.length)
    line('wasted calls (redone), total / worst', `${redo.reduce((a, b) => a + b, 0)} / ${Math.max(0, ...redo)}`, `${stoppedInTime === redo.length ? 'OK' : 'MISSED'} (each <= ${2 * BLOCK})`)
    line('hints that reached the model', s.hintsSeen)
    line('faults served (429 / drop / stall)', `${s.rateLimited} / ${s.dropped} / ${s.stalled}`)
    line('stream/retry lines on stderr', stderrLines.filter((l) => /stream|asking again|no data/i.test(l)).length)
    line('wall time', `${seconds.toFixed(1)} s`)
    if (code !== 0) console.log(`last stderr lines:\n${stderrLines.slice(-12).join('\n')}`)
  } finally {
    await server.close()
    await rm(dir, { recursive: true, force: true })
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run()
