// Hooks of the session, prompt, turn, goal, compaction and approval events, through the real agent loop
// with real shell scripts (only the model is scripted).
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import * as goal from '@goalkeeper/goal'
import * as permissions from '@goalkeeper/permissions'
import type { SessionRecord } from '@goalkeeper/session'
import { createHarness, done, type Harness, outcomes, pluginMessages, userTexts } from '@goalkeeper/test-kit'
import * as hooks from '../src/index.ts'
import type { HookRunRecord } from '../src/index.ts'
import { binDir, hookRuns, removeBins, script, turn } from './scripts.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
  await removeBins()
})

/** A hook that appends its stdin, one JSON line, to `file` (and says nothing). */
const recorder = (bin: string, name: string, file: string) => script(bin, name, `cat >> ${file}; echo >> ${file}`)
const inputs = async (file: string): Promise<Record<string, any>[]> =>
  (await fs.readFile(file, 'utf8')).split('\n').filter(Boolean).map((line) => JSON.parse(line))

/** Resolves with the first `hook/run` record of `event` appended to the agent's session from now on. */
function nextRun(h: Harness, agent: Agent, event: string): Promise<HookRunRecord> {
  return new Promise((resolve) => {
    const off = h.root.on('session/event', (session, record: SessionRecord) => {
      if (session !== agent.session || record.type !== hooks.HOOK_RUN_RECORD || (record.data as HookRunRecord).event !== event) return
      off()
      resolve(record.data as HookRunRecord)
    })
  })
}

describe('session-start and prompt-submit', () => {
  it('add context the model reads with the prompt, in Claude Code\'s plain-stdout and JSON forms', async () => {
    const bin = await binDir()
    const seen = path.join(bin, 'seen')
    const start = await script(bin, 'start.sh', `cat >> ${seen}; echo >> ${seen}; echo "branch: main"`)
    const prompt = await script(bin, 'prompt.sh', `cat >> ${seen}; echo >> ${seen}; echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"the CI is red"}}'`)
    h = await createHarness()
    await h.load(hooks, { hooks: [{ event: 'SessionStart', command: start }, { event: 'prompt-submit', command: prompt }] })
    const agent = await h.createAgent()
    h.scripted.push(done())
    agent.send({ content: 'fix it' })
    await agent.whenIdle()
    const request = userTexts(h.scripted.requests[0]!)
    expect(request[0]).toBe('fix it')
    expect(request[1]).toMatch(/SessionStart hook ".*start.sh" adds context:\nbranch: main/)
    expect(request[1]).toMatch(/UserPromptSubmit hook ".*prompt.sh" adds context:\nthe CI is red/)
    const [startInput, promptInput] = await inputs(seen)
    expect(startInput).toMatchObject({ hook_event_name: 'SessionStart', source: 'startup', session_id: agent.id, transcript_path: agent.session.file, cwd: h.workspace, goalkeeper: { event: 'session-start' } })
    expect(promptInput).toMatchObject({ hook_event_name: 'UserPromptSubmit', prompt: 'fix it', session_id: agent.id })
    // A second turn gets the prompt's context again, and no session context.
    h.scripted.push(done())
    agent.send({ content: 'again' })
    await agent.whenIdle()
    expect(userTexts(h.scripted.requests[1]!).slice(-2)).toEqual(['again', expect.stringMatching(/^UserPromptSubmit hook .*\nthe CI is red$/)])
  })

  it('refuses a prompt (exit 2 or decision block): no turn opens, and the reason is the rejection\'s', async () => {
    const bin = await binDir()
    const guard = await script(bin, 'guard.sh', `
input=$(cat)
case "$input" in *password*) echo "prompts must not carry passwords" >&2; exit 2;; esac
case "$input" in *secret*) echo '{"decision":"block","reason":"no secrets either"}';; esac`)
    h = await createHarness()
    await h.load(hooks, { hooks: [{ event: 'UserPromptSubmit', command: guard }] })
    const agent = await h.createAgent()
    agent.send({ content: 'my password is hunter2' })
    await agent.whenIdle()
    agent.send({ content: 'a secret' })
    await agent.whenIdle()
    const rejected = h.records(agent).filter((r) => r.type === 'input/rejected').map((r) => (r.data as { reason: string }).reason)
    expect(rejected).toEqual([
      expect.stringMatching(/^refused by UserPromptSubmit hook ".*guard.sh": prompts must not carry passwords$/),
      expect.stringMatching(/: no secrets either$/),
    ])
    expect(h.records(agent).some((r) => r.type === 'turn/start')).toBe(false)
    expect(h.scripted.requests).toHaveLength(0)
  })
})

describe('turn-end', () => {
  it('"continue" makes the turn go on with the reason, at most continueLimit times; stop_hook_active says it is a continue', async () => {
    const bin = await binDir()
    const seen = path.join(bin, 'seen')
    const stop = await script(bin, 'stop.sh', `cat >> ${seen}; echo >> ${seen}; echo '{"decision":"block","reason":"the tests still fail"}'`)
    h = await createHarness()
    await h.load(hooks, { hooks: [{ event: 'Stop', command: stop }], continueLimit: 2 })
    const agent = await h.createAgent()
    h.scripted.push(done('first'), done('second'), done('third'), done('next turn'))
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(h.scripted.requests).toHaveLength(3)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
    expect(pluginMessages(h.records(agent), 'hooks')).toEqual([
      expect.stringMatching(/^Not done yet: a turn-end hook asks you to go on \(1 of at most 2\)\.\nStop hook ".*stop.sh": the tests still fail$/),
      expect.stringMatching(/\(2 of at most 2\)/),
    ])
    expect((await inputs(seen)).map((i) => [i.hook_event_name, i.stop_hook_active, i.last_assistant_message])).toEqual([
      ['Stop', false, 'first'], ['Stop', true, 'second'], ['Stop', true, 'third'],
    ])
    expect(h.logs.some((l) => l.level === 'warn' && /continueLimit/.test(l.text))).toBe(true)
    // The count is per turn.
    h.scripted.push(done('a'), done('b'), done('c'))
    agent.send({ content: 'again' })
    await agent.whenIdle()
    expect(pluginMessages(h.records(agent), 'hooks')).toHaveLength(4)
  })

  it('a Claude Code stop hook that checks stop_hook_active continues once; a failing one lets the turn end', async () => {
    const bin = await binDir()
    // The public contract's loop guard: read stop_hook_active, and only block the first time.
    const once = await script(bin, 'once.sh', `
active=$(node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).stop_hook_active))')
if [ "$active" = "true" ]; then exit 0; fi
echo "run the linter first" >&2
exit 2`)
    const broken = await script(bin, 'broken.sh', 'cat >/dev/null; echo oops >&2; exit 1')
    h = await createHarness()
    await h.load(hooks, { hooks: [{ event: 'Stop', command: once }, { event: 'turn-end', command: broken }] })
    const agent = await h.createAgent()
    h.scripted.push(done('first'), done('second'))
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(h.scripted.requests).toHaveLength(2)
    expect(pluginMessages(h.records(agent), 'hooks')).toEqual([expect.stringMatching(/once.sh": run the linter first$/)])
    expect(hookRuns(h.records(agent)).map((r) => r.outcome)).toEqual(['blocked', 'failed', 'ok', 'failed'])
  })
})

describe('goal-changed, before-compact, needs-input, session-end', () => {
  it('goal-changed hooks see created, paused and budget-reached, matched by the goal event', async () => {
    const bin = await binDir()
    const seen = path.join(bin, 'seen')
    const notify = await recorder(bin, 'notify.sh', seen)
    h = await createHarness()
    await h.load(goal)
    await h.load(hooks, { hooks: [{ event: 'goal-changed', matcher: 'created|paused|budget-reached', command: notify }] })
    const agent = await h.createAgent()
    let ran = nextRun(h, agent, 'goal-changed')
    const created = h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 5 })
    await ran
    ran = nextRun(h, agent, 'goal-changed')
    h.root.goals.pause(agent, created)
    await ran
    const paused = h.root.goals.get(agent)!
    const resumed = h.root.goals.resume(agent, paused)
    ran = nextRun(h, agent, 'goal-changed')
    h.root.goals.block(agent, resumed, { code: goal.BUDGET_BLOCK_CODE, message: 'out of tokens' })
    await ran
    const events = await inputs(seen)
    expect(events.map((e) => [e.hook_event_name, e.goal_event, e.goal.phase])).toEqual([
      ['GoalChanged', 'created', 'active'], ['GoalChanged', 'paused', 'paused'], ['GoalChanged', 'budget-reached', 'blocked'],
    ])
    expect(events[2]!.goal.blockedReason).toEqual({ code: 'budget-limited', message: 'out of tokens' })
  })

  it('before-compact runs before a compaction and does not stop it', async () => {
    const bin = await binDir()
    const seen = path.join(bin, 'seen')
    h = await createHarness()
    await h.load(hooks, { hooks: [{ event: 'PreCompact', command: await recorder(bin, 'compact.sh', seen) }] })
    const agent = await h.createAgent()
    h.scripted.push(done('first answer ' + 'a'.repeat(2000)), done('second'), done('the summary'))
    await turn(h, agent, [], 'one ' + 'p'.repeat(2000))
    await turn(h, agent, [], 'two')
    h.scripted.push(done('the summary'))
    expect(await agent.compact()).toMatchObject({ kind: 'compacted' })
    expect(await inputs(seen)).toEqual([expect.objectContaining({ hook_event_name: 'PreCompact', trigger: 'manual' })])
    expect(hookRuns(h.records(agent)).map((r) => r.event)).toEqual(['before-compact'])
  })

  it('needs-input runs when a call waits for a person\'s answer (notify-send style)', async () => {
    const bin = await binDir()
    const seen = path.join(bin, 'seen')
    h = await createHarness()
    await h.load(permissions, { mode: 'read-only' })
    await h.load(hooks, { hooks: [{ event: 'Notification', matcher: 'permission_prompt', command: await recorder(bin, 'notify.sh', seen) }] })
    const agent = await h.createAgent()
    h.root.on('permissions/ask', () => Promise.resolve({ kind: 'allow', scope: 'once', by: 'test' }))
    const ran = nextRun(h, agent, 'needs-input')
    await turn(h, agent, [['write_file', { path: 'a.txt', content: 'x' }]])
    await ran
    expect(await inputs(seen)).toEqual([expect.objectContaining({
      hook_event_name: 'Notification', notification_type: 'permission_prompt', tool_name: 'write_file', message: 'goalkeeper needs your permission to use write_file',
    })])
  })

  it('session-end runs when an agent is disposed, and for live agents when the plugin unloads', async () => {
    const bin = await binDir()
    const seen = path.join(bin, 'seen')
    h = await createHarness()
    const fiber = await h.load(hooks, { hooks: [{ event: 'SessionEnd', command: await recorder(bin, 'end.sh', seen) }] })
    const first = await h.createAgent()
    const second = await h.createAgent()
    await first.dispose()
    await fiber.dispose()
    const ends = await inputs(seen)
    expect(ends.map((e) => [e.session_id, e.reason])).toEqual([[first.id, 'other'], [second.id, 'exit']])
  })
})
