// Agent-loop overhead: turns/s and steps/s through ctx.agents against a minimal loop that makes the same
// provider calls and the same session appends (and flush) with no admission, events or plugins.
// Run alone: node --expose-gc --import tsx bench/agent-loop.bench.ts [turns]
import { pathToFileURL } from 'node:url'
import type { Context } from 'cordis'
import type { ModelMessage, ModelProvider, ModelRequest, ScriptStep } from '@goalkeeper/model'
import type { Session, UserMessage } from '@goalkeeper/session'
import { createHarness, type Harness } from '@goalkeeper/test-kit'

const IDLE_AGENTS = 1000
const ROUNDS = 3

const median = (rates: Rate[]) => [...rates].sort((a, b) => a.turnsPerSec - b.turnsPerSec)[Math.floor(rates.length / 2)]

/** Each turn: a step that calls the `noop` tool, then a step that answers. */
const turnScript = (): ScriptStep[] => [
  { toolCalls: [{ name: 'noop', arguments: {} }] },
  { text: 'k' },
]

const noopTool = {
  name: 'bench-tools',
  inject: ['tools'],
  apply(ctx: Context) {
    ctx.tools.register({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object', properties: {} }, execute: () => 'ok' })
  },
}

interface Rate { turns: number; seconds: number; turnsPerSec: number; stepsPerSec: number }

const rate = (turns: number, steps: number, start: bigint): Rate => {
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  return { turns, seconds, turnsPerSec: turns / seconds, stepsPerSec: steps / seconds }
}

async function loopRun(h: Harness, turns: number): Promise<Rate> {
  const agent = await h.createAgent()
  h.scripted.reset()
  for (let i = 0; i < turns; i++) h.scripted.push(...turnScript())
  const start = process.hrtime.bigint()
  for (let i = 0; i < turns; i++) {
    agent.send({ content: `turn ${i}` })
    await agent.whenIdle()
  }
  const result = rate(turns, turns * 2, start)
  await agent.dispose()
  return result
}

/** The same calls and appends as one agent turn, written straight-line. */
async function baselineRun(h: Harness, turns: number): Promise<Rate> {
  const { sessions, tools } = h.root
  const provider = h.scripted
  const session = await sessions.create({ cwd: h.workspace })
  provider.reset()
  for (let i = 0; i < turns; i++) provider.push(...turnScript())
  const messages: ModelMessage[] = []
  const start = process.hrtime.bigint()
  for (let turn = 1; turn <= turns; turn++) {
    const message: UserMessage = { id: `b${turn}`, content: [{ type: 'text', text: `turn ${turn}` }], source: { kind: 'human' } }
    session.append('input/queued', { message })
    session.append('turn/start', { turn })
    session.append('user/message', message)
    messages.push({ role: 'user', content: message.content })
    for (let step = 1; step <= 2; step++) {
      session.append('step/start', { turn, step })
      const reply = await call(provider, { system: 'bench', messages: messages.slice(), tools: tools.schemas() })
      session.append('assistant/message', { turn, step, text: reply.text, toolCalls: reply.toolCalls })
      messages.push({ role: 'assistant', text: reply.text, toolCalls: reply.toolCalls })
      for (const toolCall of reply.toolCalls) {
        session.append('tool/call', { turn, step, callId: toolCall.id, name: toolCall.name, arguments: toolCall.arguments })
        const result = await tools.execute(toolCall, { agent: undefined as never, turn, step, signal: new AbortController().signal, turnSources: [], cwd: h.workspace })
        session.append('tool/result', { turn, step, callId: toolCall.id, ok: result.ok, content: result.content })
        messages.push({ role: 'tool', callId: toolCall.id, name: toolCall.name, ok: result.ok, content: result.content })
      }
      session.append('step/end', { turn, step })
    }
    session.append('turn/end', { turn, outcome: { kind: 'completed' } })
    await sessions.flush(session)
  }
  const result = rate(turns, turns * 2, start)
  await sessions.close(session as Session)
  return result
}

async function call(provider: ModelProvider, request: ModelRequest) {
  let text = ''
  const toolCalls = []
  for await (const chunk of provider.stream(request, new AbortController().signal)) {
    if (chunk.type === 'text') text += chunk.text
    else if (chunk.type === 'tool-call') toolCalls.push(chunk.call)
    else if (chunk.type === 'finish') break
  }
  return { text, toolCalls }
}

const heap = () => {
  (globalThis as { gc?: () => void }).gc?.()
  return process.memoryUsage().heapUsed
}

async function idleMemory(h: Harness) {
  const before = heap()
  const sessions: Session[] = []
  for (let i = 0; i < IDLE_AGENTS; i++) sessions.push(await h.root.sessions.create({ cwd: h.workspace }))
  const withSessions = heap()
  const agents = []
  for (const session of sessions) agents.push(await h.root.agents.create({ session, model: 'scripted' }))
  const withAgents = heap()
  const result = {
    bytesPerAgent: Math.round((withAgents - withSessions) / IDLE_AGENTS),
    bytesPerAgentWithSession: Math.round((withAgents - before) / IDLE_AGENTS),
    gc: typeof (globalThis as { gc?: unknown }).gc === 'function',
  }
  await Promise.all(agents.map((agent) => agent.dispose()))
  await Promise.all(sessions.map((session) => h.root.sessions.close(session)))
  return result
}

export async function run(turns = 100) {
  const h = await createHarness({ workspaceTools: false })
  try {
    await h.load(noopTool)
    // Warm-up so JIT and file-system caches favour neither side.
    await loopRun(h, 20)
    await baselineRun(h, 20)
    // Alternating rounds, median of each: fsync time varies with whatever else the disk is doing.
    const baselines: Rate[] = []
    const loops: Rate[] = []
    for (let round = 0; round < ROUNDS; round++) {
      baselines.push(await baselineRun(h, turns))
      loops.push(await loopRun(h, turns))
    }
    const baseline = median(baselines)
    const loop = median(loops)
    const ratio = baseline.turnsPerSec / loop.turnsPerSec
    const memory = await idleMemory(h)
    const fmt = (r: Rate) => `${r.turnsPerSec.toFixed(1)} turns/s, ${r.stepsPerSec.toFixed(1)} steps/s (median of ${ROUNDS} rounds of ${r.turns} turns)`
    console.log(`agent-loop: ${fmt(loop)}`)
    console.log(`baseline:   ${fmt(baseline)}`)
    console.log(`ratio baseline/agent-loop: ${ratio.toFixed(2)}x (target: within 2x) ${ratio <= 2 ? 'OK' : 'OVER TARGET'}`)
    console.log(`idle agent: ${memory.bytesPerAgent} bytes of heap each, ${memory.bytesPerAgentWithSession} with its session (${IDLE_AGENTS} agents${memory.gc ? '' : ', no --expose-gc: approximate'})`)
    return { loop, baseline, ratio, memory }
  } finally {
    await h.dispose()
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run(Number(process.argv[2]) || undefined).catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
