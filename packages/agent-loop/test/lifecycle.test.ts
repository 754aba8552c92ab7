import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect } from 'vitest'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import { describeRecords, it, nextEvent, testTools, timeline } from './helpers.ts'

describe('dispose and unload', () => {

  it('unloading agent-loop mid-turn ends the turn disposed, without a cancel event, and waits for quiescence', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ kind: 'hang' })
    const started = nextEvent(h.root, 'agent/turn-start')
    agent.send({ content: 'work' })
    await started
    const events = h.events(['agent/cancel-requested', 'agent/turn-end', 'agent/status', 'agent/disposed', 'session/flush'])
    await h.fiber('agent-loop').dispose()
    expect(agent.disposed).toBe(true)
    expect(agent.status).toBe('idle')
    expect(timeline(events)).toEqual(['agent/turn-end disposed', 'session/flush', 'agent/status idle', 'agent/disposed'])
    expect(describeRecords(h.readFile(agent)).slice(-2)).toEqual(['step/end 1.1', 'turn/end 1 disposed'])
    expect(h.root.get('agents')).toBeUndefined()
  })

  it('agent.dispose ends the turn, closes the session it created and refuses new work', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ toolCalls: [{ name: 'wait' }] })
    const waiting = nextEvent(h.root, 'test/waiting')
    agent.send({ content: 'work' })
    await waiting
    const disposed = nextEvent(h.root, 'agent/disposed')
    await agent.dispose()
    await disposed
    expect(h.root.agents.get(agent.id)).toBeUndefined()
    expect(agent.session.closed).toBe(true)
    expect(() => agent.send({ content: 'more' })).toThrow(/disposed/)
    expect(agent.cancel('user')).toBe(false)
    await agent.whenIdle()
    expect(describeRecords(h.readFile(agent)).slice(-4)).toEqual(['tool/call wait', 'tool/result ABORTED', 'step/end 1.1', 'turn/end 1 disposed'])
  })

  it('dispose while a batch is under decision leaves it queued, emits no cancel and waits for the decision', async ({ h }) => {
    const agent = await h.createAgent()
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    const order: string[] = []
    const deciding = nextEvent(h.root, 'agent/prompt-submit')
    h.root.on('agent/prompt-submit', async (_agent, _submission, next) => {
      await held
      order.push('decided')
      return next()
    })
    agent.send({ content: 'undecided' })
    await deciding
    const events = h.events(['agent/cancel-requested', 'agent/turn-start', 'agent/status', 'agent/disposed'])
    const disposing = agent.dispose().then(() => { order.push('disposed') })
    // Released a macrotask later: a dispose that did not wait for the decision would be done by then.
    setImmediate(release)
    await disposing
    expect(order).toEqual(['decided', 'disposed'])
    expect(timeline(events)).toEqual(['agent/status idle', 'agent/disposed'])
    expect(describeRecords(h.readFile(agent))).toEqual(['input/queued undecided'])
  })

  it('a failed flush is reported as FLUSH_FAILED for that turn, before the next batch, and the agent stays usable', async ({ h }) => {
    const agent = await h.createAgent()
    const file = agent.session.file
    h.scripted.push({ text: 'one' }, () => {
      // Another file now sits at the session's path: the writer refuses to call that durable, and stops writing.
      fs.renameSync(file, `${file}.moved`)
      fs.writeFileSync(file, 'not the session\n')
      agent.send({ content: 'queued meanwhile' })
      return { text: 'two' }
    }, { text: 'three' }, { text: 'four' })
    agent.send({ content: 'first' })
    await agent.whenIdle()
    const errors = h.events(['agent/error', 'agent/status', 'agent/prompt-submit'])
    agent.send({ content: 'second' })
    await agent.whenIdle()
    expect(timeline(errors)).toEqual(['agent/status running', 'agent/prompt-submit', 'agent/error FLUSH_FAILED', 'agent/prompt-submit', 'agent/error FLUSH_FAILED', 'agent/status idle'])
    expect(errors[2].args[1]).toBe(2)
    expect((errors[2].args[2] as any).cause).toMatchObject({ code: 'SESSION_LOST' })

    agent.send({ content: 'last' })
    await agent.whenIdle()
    expect(timeline(errors).slice(6)).toEqual(['agent/status running', 'agent/prompt-submit', 'agent/error FLUSH_FAILED', 'agent/status idle'])
    expect(agent.session.records.filter((r) => r.type === 'turn/end')).toHaveLength(4)
    expect(fs.readFileSync(file, 'utf8')).toBe('not the session\n')
  })
})

describe('resume and fork', () => {
  let dir: string
  const harnesses: Harness[] = []
  const start = async () => {
    const h = await createHarness({ workspaceTools: false, sessions: { dir } })
    await h.load(testTools)
    harnesses.push(h)
    return h
  }
  beforeEach(async () => { dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'gk-')) })
  afterEach(async () => {
    for (const h of harnesses.splice(0)) await h.dispose()
    await fsp.rm(dir, { recursive: true, force: true })
  })

  it('a resumed agent in a new Context sends the same history to the model and continues the turn numbers', async () => {
    const first = await start()
    const agent = await first.createAgent()
    first.scripted.push({ toolCalls: [{ id: 't1', name: 'echo', arguments: { text: 'x' } }] }, { text: 'first answer' }, { text: 'second answer' })
    agent.send({ content: 'one' })
    await agent.whenIdle()
    agent.send({ content: 'two' })
    await agent.whenIdle()
    const expected = first.scripted.requests[2]
    const id = agent.id
    await first.dispose()

    const second = await start()
    const events = second.events(['agent/created', 'agent/session-start'])
    const resumed = await second.root.agents.resume(id, { model: 'scripted' })
    expect(events.map((e) => [e.name, ...e.args.slice(1)])).toEqual([['agent/created'], ['agent/session-start', 'resume']])
    expect(events[0].args[0]).toBe(resumed)
    second.scripted.push({ text: 'third answer' })
    resumed.send({ content: 'three' })
    await resumed.whenIdle()
    const request = second.scripted.requests[0]
    expect(request.messages.slice(0, -2)).toEqual(expected.messages)
    expect(request.messages.slice(-2)).toEqual([
      { role: 'assistant', text: 'second answer', toolCalls: [] },
      { role: 'user', content: [{ type: 'text', text: 'three' }] },
    ])
    expect(request.system).toBe(expected.system)
    expect(describeRecords(second.records(resumed)).filter((r) => r.startsWith('turn/start'))).toEqual(['turn/start 1', 'turn/start 2', 'turn/start 3'])
  })

  it('restores unadmitted human inputs without waking and cancels the others as interrupted', async () => {
    const first = await start()
    const agent = await first.createAgent()
    const human = agent.send({ content: 'human input' })
    const plugin = agent.send({ content: 'plugin input', source: { kind: 'plugin', name: 'p' } })
    const goal = agent.send({ content: 'goal input', source: { kind: 'goal', goalId: 'g', revision: 1, round: 1 } })
    // Unloading before the batch is taken leaves all three queued in the log.
    await first.dispose()

    const second = await start()
    const resumed = await second.root.agents.resume(agent.id, { model: 'scripted' })
    expect(resumed.queued).toEqual([human])
    expect(second.records(resumed).slice(-2).map((r) => r.data)).toEqual([
      { messageId: plugin.id, reason: 'interrupted' }, { messageId: goal.id, reason: 'interrupted' },
    ])
    await resumed.whenIdle()
    expect(resumed.status).toBe('idle')
    expect(second.scripted.requests).toEqual([])

    second.scripted.push({ text: 'ran it' })
    expect(resumed.wake()).toBe(true)
    await resumed.whenIdle()
    expect(second.scripted.requests[0].messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'human input' }] }])
  })

  it('restored human inputs join the batch of the next send, ahead of it', async () => {
    const first = await start()
    const agent = await first.createAgent()
    const restored = agent.send({ content: 'left over' })
    await first.dispose()

    const second = await start()
    const resumed = await second.root.agents.resume(agent.id, { model: 'scripted' })
    const batches = second.events(['agent/prompt-submit'])
    second.scripted.push({ text: 'both' })
    const fresh = resumed.send({ content: 'new prompt' })
    await resumed.whenIdle()
    expect(batches.map((e) => (e.args[1] as any).messages)).toEqual([[restored, fresh]])
    expect(describeRecords(second.records(resumed)).filter((r) => r.startsWith('user/'))).toEqual(['user/message left over', 'user/message new prompt'])
  })

  it('resumes after a crash mid-turn with the turn closed as interrupted', async () => {
    const first = await start()
    const agent = await first.createAgent()
    first.scripted.push({ toolCalls: [{ id: 'w1', name: 'wait' }] })
    const waiting = nextEvent(first.root, 'test/waiting')
    agent.send({ content: 'long job' })
    await waiting
    await first.root.sessions.flush(agent.session)
    // What a crash leaves behind: the file as flushed mid-turn.
    const crashed = await fsp.mkdtemp(path.join(os.tmpdir(), 'gk-'))
    fs.copyFileSync(agent.session.file, path.join(crashed, path.basename(agent.session.file)))
    fs.copyFileSync(`${agent.session.file}.seal`, path.join(crashed, `${path.basename(agent.session.file)}.seal`))
    await first.dispose()
    fs.rmSync(dir, { recursive: true, force: true })
    fs.renameSync(crashed, dir)

    const second = await start()
    const resumed = await second.root.agents.resume(agent.id, { model: 'scripted' })
    expect(describeRecords(second.records(resumed)).slice(-3)).toEqual(['tool/result INTERRUPTED', 'step/end 1.1', 'turn/end 1 interrupted'])
    second.scripted.push({ text: 'resumed' })
    resumed.send({ content: 'go on' })
    await resumed.whenIdle()
    const messages = second.scripted.requests[0].messages
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'user'])
    expect((messages[2] as any).callId).toBe('w1')
    expect(second.records(resumed).filter((r) => r.type === 'turn/start').map((r: any) => r.data.turn)).toEqual([1, 2])
  })

  it('fork starts an agent on a copy of the session up to a seq', async () => {
    const first = await start()
    const agent = await first.createAgent()
    first.scripted.push({ text: 'a1' }, { text: 'a2' }, { text: 'fork answer' })
    agent.send({ content: 'q1' })
    await agent.whenIdle()
    const cut = agent.session.records.length - 1
    agent.send({ content: 'q2' })
    await agent.whenIdle()
    const events = first.events(['agent/session-start'])
    const forked = await first.root.agents.fork(agent.id, cut, { model: 'scripted' })
    expect(forked.id).not.toBe(agent.id)
    expect(events.map((e) => e.args[1])).toEqual(['fork'])
    forked.send({ content: 'q3' })
    await forked.whenIdle()
    expect(first.scripted.requests[2].messages.map((m: any) => m.content?.[0]?.text ?? m.text)).toEqual(['q1', 'a1', 'q3'])
  })
})

describe('a goal round on disk before its model call', () => {
  const round = { kind: 'goal', goalId: 'g1', revision: 1, round: 1 } as const

  it('flushes a turn with a goal-sourced message before the model is called; a human turn is not held for it', async ({ h }) => {
    // A minute of write-behind: only an explicit flush writes before the call.
    await h.fiber('session').update({ ...h.fiber('session').config, flushDelayMs: 60_000 })
    const agent = await h.createAgent()
    const onDisk: string[][] = []
    const seen = () => {
      onDisk.push(fs.readFileSync(agent.session.file!, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line).type))
      return { text: 'ok' }
    }
    h.scripted.push(seen, seen)
    agent.send({ content: 'round one', source: round })
    await agent.whenIdle()
    agent.send({ content: 'a person' })
    await agent.whenIdle()
    expect(onDisk[0]).toEqual(['session/header', 'input/queued', 'turn/start', 'user/message'])
    // The human turn's records were still behind when its call began (the goal round's turn/end was flushed after it).
    expect(onDisk[1].at(-1)).toBe('turn/end')
  })

  it('a goal round whose start cannot be saved ends FLUSH_FAILED without a model call', async ({ h }) => {
    const agent = await h.createAgent()
    const file = agent.session.file!
    fs.renameSync(file, `${file}.moved`)
    fs.writeFileSync(file, 'not the session\n')
    agent.send({ content: 'round one', source: round })
    await agent.whenIdle()
    expect(h.scripted.requests).toHaveLength(0)
    expect(agent.session.records.find((r) => r.type === 'turn/end')?.data).toMatchObject({ outcome: { kind: 'error', code: 'FLUSH_FAILED' } })
  })
})
