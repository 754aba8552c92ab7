// Before- and after-call hooks on the real tool pipeline and agent loop, with real shell scripts (only the
// model is scripted): deny, rewrite, notes, failures that deny, hangs killed at their timeout, garbage and
// huge output, and what the session records.
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, pluginMessages, until } from '@goalkeeper/test-kit'
import * as hooks from '../src/index.ts'
import { alive, binDir, hookRuns, removeBins, script, toolResults, turn } from './scripts.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
  await removeBins()
})

async function start(hookList: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  h = await createHarness()
  await h.load(hooks, { hooks: hookList, ...extra })
  return { h, agent: await h.createAgent() }
}

describe('before-tool-call', () => {
  it('exit 2 denies the call with stderr as the reason the model reads; a matcher limits it to its tool', async () => {
    const bin = await binDir()
    const guard = await script(bin, 'guard.sh', `
input=$(cat)
case "$input" in *'rm -rf'*) echo "never rm -rf here" >&2; exit 2;; esac
exit 0`)
    const { h, agent } = await start([{ event: 'PreToolUse', matcher: 'Bash', command: guard }])
    await fs.writeFile(path.join(h.workspace, 'keep.txt'), 'x')
    await turn(h, agent, [['run_command', { command: 'rm -rf keep.txt' }], ['run_command', { command: 'echo fine' }], ['read_file', { path: 'keep.txt' }]])
    const [denied, ran, read] = toolResults(h, agent)
    expect(denied).toMatchObject({ ok: false, error: { code: 'DENIED' }, denied: { by: 'hooks', reason: 'never rm -rf here' } })
    expect(ran).toMatchObject({ ok: true })
    expect(read).toMatchObject({ ok: true })
    expect(await fs.readFile(path.join(h.workspace, 'keep.txt'), 'utf8')).toBe('x')
    expect(h.scripted.requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', content: 'The call was denied by hooks: never rm -rf here' })
    // Two runs (the read_file call did not match), each recorded with its exit code.
    const runs = hookRuns(h.records(agent))
    expect(runs.map((r) => [r.event, r.exitCode, r.outcome, r.decisions])).toEqual([
      ['before-tool-call', 2, 'blocked', ['block']],
      ['before-tool-call', 0, 'ok', undefined],
    ])
    expect(runs[0]).toMatchObject({ hook: guard, turn: 1, step: 1 })
    expect(typeof runs[0]!.durationMs).toBe('number')
  })

  it('rewrites the arguments with updatedInput (recorded as a rewrite), matched by a glob on the command', async () => {
    const bin = await binDir()
    const rewrite = await script(bin, 'rewrite.sh', `
cat >/dev/null
printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"quieter","updatedInput":{"command":"echo rewritten"}}}'`)
    const { h, agent } = await start([{ event: 'before-tool-call', matcher: { command: 'echo *' }, command: rewrite }])
    await turn(h, agent, [['run_command', { command: 'echo original' }], ['run_command', { command: 'printf untouched' }]])
    const [rewritten, untouched] = toolResults(h, agent)
    expect(rewritten.ok).toBe(true)
    expect(rewritten.content).toContain('rewritten')
    expect(rewritten.rewrites).toEqual([{ by: 'hooks', reason: 'quieter', arguments: JSON.stringify({ command: 'echo rewritten' }) }])
    expect(untouched.content).toContain('untouched')
    expect(untouched.rewrites).toBeUndefined()
    expect(hookRuns(h.records(agent)).map((r) => r.decisions)).toEqual([['allow', 'rewrite']])
  })

  it('a path glob and Claude Code\'s file_path: a protected folder stays untouched, whatever the tool', async () => {
    const bin = await binDir()
    const protect = await script(bin, 'protect.sh', `
file=$(node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).tool_input.file_path))')
echo "$file is in migrations/, which is protected" >&2
exit 2`)
    const { h, agent } = await start([{ event: 'PreToolUse', matcher: { tool: 'Edit|Write', path: 'migrations/**' }, command: protect }])
    await turn(h, agent, [
      ['write_file', { path: 'migrations/001.sql', content: 'drop table x;' }],
      ['write_file', { path: 'src/a.ts', content: 'ok' }],
    ])
    const [blocked, written] = toolResults(h, agent)
    expect(blocked.denied).toEqual({ by: 'hooks', reason: `${path.join(h.workspace, 'migrations/001.sql')} is in migrations/, which is protected` })
    expect(written.ok).toBe(true)
    await expect(fs.stat(path.join(h.workspace, 'migrations'))).rejects.toThrow()
  })

  it('a hook that crashes, prints garbage or hangs denies the call (fail closed), and the agent goes on', async () => {
    const bin = await binDir()
    const pids = path.join(bin, 'pids')
    const crash = await script(bin, 'crash.sh', 'cat >/dev/null; echo "jq: command not found" >&2; exit 127')
    const garbage = await script(bin, 'garbage.sh', `cat >/dev/null; echo '{"hookSpecificOutput": {"permissionDecision": '`)
    // The hang leaves a child of its own behind: the whole process group goes at the timeout.
    const hang = await script(bin, 'hang.sh', `sleep 300 & echo $$ $! > ${pids}; wait`)
    const { h, agent } = await start([
      { event: 'before-tool-call', matcher: { command: 'one*' }, command: crash },
      { event: 'before-tool-call', matcher: { command: 'two*' }, command: garbage },
      { event: 'before-tool-call', matcher: { command: 'three*' }, command: hang, timeout: 1 },
    ])
    await turn(h, agent, [['run_command', { command: 'one' }], ['run_command', { command: 'two' }], ['run_command', { command: 'three' }]])
    const [one, two, three] = toolResults(h, agent)
    expect(one.denied.reason).toBe(`the PreToolUse hook "${crash}" failed (exit 127: jq: command not found), and a before-call hook that fails refuses the call`)
    expect(two.denied.reason).toMatch(/^the PreToolUse hook ".*garbage.sh" failed \(its output is not valid JSON: \{"hookSpecificOutput"/)
    expect(three.denied.reason).toMatch(/hang.sh" failed \(killed after 1 s \(its timeout\)\)/)
    const [shell, child] = (await fs.readFile(pids, 'utf8')).trim().split(' ').map(Number)
    // SIGKILL reaches the group at once, but a process still has to be scheduled to die (or, under
    // load, be reaped): the wait is bounded, and a process that outlives it fails the test.
    await until(() => !alive(shell!) && !alive(child!), 'the hook\'s process group to die', 5_000)
    // The turn ended normally: the model was asked again after each denial.
    expect(h.records(agent).at(-1)).toMatchObject({ type: 'turn/end', data: { outcome: { kind: 'completed' } } })
    expect(hookRuns(h.records(agent)).map((r) => [r.outcome, r.exitCode])).toEqual([['failed', 127], ['garbage', 0], ['timeout', null]])
    expect(hookRuns(h.records(agent))[2]!.signal).toBe('SIGKILL')
    expect(h.logs.filter((l) => l.level === 'warn' && l.name === 'hooks').length).toBe(3)
  })

  it('several hooks: deny wins over allow, and continue:false stops the turn as Ctrl-C does', async () => {
    const bin = await binDir()
    const allow = await script(bin, 'allow.sh', `cat >/dev/null; echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`)
    const deny = await script(bin, 'deny.sh', `cat >/dev/null; echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"not today"}}'`)
    const stop = await script(bin, 'stop.sh', `cat >/dev/null; echo '{"continue":false,"stopReason":"the build server is down"}'`)
    const { h, agent } = await start([
      { event: 'before-tool-call', matcher: { command: 'a*' }, command: allow },
      { event: 'before-tool-call', matcher: { command: 'a*' }, command: deny },
      { event: 'before-tool-call', matcher: { command: 'b*' }, command: stop },
    ])
    await turn(h, agent, [['run_command', { command: 'a' }], ['run_command', { command: 'b' }], ['run_command', { command: 'c' }]])
    const results = toolResults(h, agent)
    expect(results[0]!.denied).toEqual({ by: 'hooks', reason: 'not today' })
    // The stop cancels the turn at once: the call is aborted, and nothing after it runs.
    expect(results[1]).toMatchObject({ ok: false, error: { code: 'ABORTED' } })
    expect(results).toHaveLength(2)
    expect(h.logs.some((l) => l.level === 'warn' && /stop\.sh" stops the agent: the build server is down/.test(l.text))).toBe(true)
    expect(h.records(agent).at(-1)).toMatchObject({ type: 'turn/end', data: { outcome: { kind: 'aborted', cause: 'user' } } })
  })
})

describe('after-tool-call', () => {
  it('adds a note the model reads before its next call; runs before the next call is reviewed', async () => {
    const bin = await binDir()
    const log = path.join(bin, 'order')
    const format = await script(bin, 'format.sh', `
cat >/dev/null
echo after >> ${log}
echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatted with prettier"}}'`)
    const before = await script(bin, 'before.sh', `cat >/dev/null; echo before >> ${log}`)
    const { h, agent } = await start([
      { event: 'PostToolUse', matcher: { tool: 'write_file', path: '*.ts' }, command: format },
      { event: 'PreToolUse', command: before },
    ])
    await turn(h, agent, [['write_file', { path: 'src/a.ts', content: 'x' }], ['write_file', { path: 'b.md', content: 'y' }]])
    expect((await fs.readFile(log, 'utf8')).trim().split('\n')).toEqual(['before', 'after', 'before'])
    const notes = pluginMessages(h.records(agent), 'hooks')
    expect(notes).toEqual([expect.stringMatching(/^PostToolUse hook ".*format.sh" on write_file \(.+\): formatted with prettier$/)])
    // The note reached the model with the very next request.
    expect(JSON.stringify(h.scripted.requests[1]!.messages)).toContain('formatted with prettier')
  })

  it('a crash, garbage or huge output is reported and recorded, and does not stop the agent', async () => {
    const bin = await binDir()
    // Inline, so the hook's own shell is what dies of the signal.
    const crash = 'cat >/dev/null; kill -SEGV $$'
    const huge = await script(bin, 'huge.sh', 'cat >/dev/null; head -c 5000000 /dev/zero | tr "\\0" x')
    const { h, agent } = await start([
      { event: 'after-tool-call', command: crash },
      { event: 'after-tool-call', command: huge, maxOutput: 4096 },
      { event: 'after-tool-call', command: `cat >/dev/null; printf '{"decision": "block", '` },
    ])
    await turn(h, agent, [['run_command', { command: 'echo one' }], ['run_command', { command: 'echo two' }]])
    expect(toolResults(h, agent).map((r) => r.ok)).toEqual([true, true])
    const runs = hookRuns(h.records(agent))
    expect(runs).toHaveLength(6)
    expect(runs.filter((r) => r.outcome === 'garbage').map((r) => r.problem)).toEqual([
      'its output is not valid JSON: {"decision": "block",', 'its output is not valid JSON: {"decision": "block",',
    ])
    const crashed = runs.filter((r) => r.outcome === 'failed')
    expect(crashed).toHaveLength(2)
    expect(crashed[0]).toMatchObject({ signal: 'SIGSEGV', exitCode: null, problem: 'killed by SIGSEGV' })
    const big = runs.filter((r) => r.outcome === 'ok')
    expect(big.map((r) => r.outputCut)).toEqual([true, true])
    expect(pluginMessages(h.records(agent), 'hooks')).toEqual([])
    expect(h.records(agent).at(-1)).toMatchObject({ type: 'turn/end', data: { outcome: { kind: 'completed' } } })
  })
})

describe('hook/run records', () => {
  it('mask secrets in the command label and the problem', async () => {
    const secret = 'sk-live-' + 'q'.repeat(32)
    process.env.HOOKS_TEST_API_KEY = secret
    try {
      const { h, agent } = await start([{ event: 'after-tool-call', command: `cat >/dev/null; echo "token ${secret} refused" >&2; exit 3` }])
      await turn(h, agent, [['run_command', { command: 'echo hi' }]])
      const [run] = hookRuns(h.records(agent))
      expect(run!.outcome).toBe('failed')
      expect(JSON.stringify(run)).not.toContain(secret)
      expect(run!.hook).toContain('***')
      expect(run!.problem).toBe('exit 3: token *** refused')
    } finally {
      delete process.env.HOOKS_TEST_API_KEY
    }
  })

  it('mask secrets a hook prints into a denial or a note, which the session keeps and the model reads', async () => {
    const secret = 'sk-live-' + 'z'.repeat(32)
    process.env.HOOKS_TEST_API_KEY = secret
    try {
      const { h, agent } = await start([
        { event: 'before-tool-call', matcher: { command: 'deny*' }, command: 'cat >/dev/null; echo "refused with $HOOKS_TEST_API_KEY" >&2; exit 2' },
        { event: 'after-tool-call', command: 'cat >/dev/null; echo "{\\"decision\\":\\"block\\",\\"reason\\":\\"key $HOOKS_TEST_API_KEY\\"}"' },
      ])
      await turn(h, agent, [['run_command', { command: 'deny me' }], ['run_command', { command: 'echo ok' }]])
      expect(toolResults(h, agent)[0]!.denied.reason).toBe('refused with ***')
      expect(pluginMessages(h.records(agent), 'hooks')).toEqual([expect.stringMatching(/: key \*\*\*$/)])
      expect(JSON.stringify(h.records(agent))).not.toContain(secret)
    } finally {
      delete process.env.HOOKS_TEST_API_KEY
    }
  })
})
