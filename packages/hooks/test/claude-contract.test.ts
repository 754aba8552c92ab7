// Hook scripts written to Claude Code's public command-hook contract (stdin fields, exit 2, the JSON decision
// fields, $CLAUDE_PROJECT_DIR), run unchanged through the real agent loop.
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness, pluginMessages, userTexts } from '@goalkeeper/test-kit'
import * as hooks from '../src/index.ts'
import { binDir, removeBins, script, toolResults, turn } from './scripts.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
  await removeBins()
})

/** Reads one field of the stdin JSON (a dotted path), as `jq -r` would. */
const field = (dotted: string) => `node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{let v=JSON.parse(s);for(const k of "${dotted}".split("."))v=v?.[k];console.log(v??"")})'`

async function start(list: Record<string, unknown>[]) {
  h = await createHarness()
  await h.load(hooks, { hooks: list })
  return { h, agent: await h.createAgent() }
}

describe('Claude Code command-hook contract', () => {
  it('a Bash command validator: hook_event_name, tool_name and tool_input.command in, exit 2 and stderr out', async () => {
    const bin = await binDir()
    const validator = await script(bin, 'bash-validator.sh', `
input=$(cat)
event=$(printf '%s' "$input" | ${field('hook_event_name')})
tool=$(printf '%s' "$input" | ${field('tool_name')})
command=$(printf '%s' "$input" | ${field('tool_input.command')})
[ "$event" = "PreToolUse" ] || exit 1
[ "$tool" = "run_command" ] || exit 1
case "$command" in grep*) echo "Use 'rg' (ripgrep) instead of 'grep' for better performance" >&2; exit 2;; esac
exit 0`)
    const { h, agent } = await start([{ event: 'PreToolUse', matcher: 'Bash', command: validator }])
    await turn(h, agent, [['run_command', { command: 'grep -r foo .' }], ['run_command', { command: 'rg foo' }]])
    const [grep, rg] = toolResults(h, agent)
    expect(grep.denied).toEqual({ by: 'hooks', reason: "Use 'rg' (ripgrep) instead of 'grep' for better performance" })
    expect(rg.denied).toBeUndefined()
  })

  it('PostToolUse decision "block" with a reason is fed to the model; $CLAUDE_PROJECT_DIR is the workspace', async () => {
    const bin = await binDir()
    const post = await script(bin, 'post.sh', `
cat >/dev/null
if [ -f "$CLAUDE_PROJECT_DIR/a.txt" ]; then
  echo '{"decision": "block", "reason": "a.txt must end with a newline"}'
fi`)
    const { h, agent } = await start([{ event: 'PostToolUse', matcher: 'Write|Edit', command: post }])
    await turn(h, agent, [['write_file', { path: 'a.txt', content: 'no newline' }]])
    expect(pluginMessages(h.records(agent), 'hooks')).toEqual([expect.stringMatching(/post.sh" on write_file \(.+\): a.txt must end with a newline$/)])
    expect(JSON.stringify(h.scripted.requests[1]!.messages)).toContain('a.txt must end with a newline')
  })

  it('SessionStart hookSpecificOutput.additionalContext, and the legacy decision "approve"', async () => {
    const bin = await binDir()
    const context = await script(bin, 'context.sh', `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"Open issues: 3"}}'`)
    const approve = await script(bin, 'approve.sh', `cat >/dev/null; echo '{"decision":"approve","reason":"read-only command"}'`)
    const { h, agent } = await start([{ event: 'SessionStart', matcher: 'startup', command: context }, { event: 'PreToolUse', command: approve }])
    await fs.writeFile(path.join(h.workspace, 'x.txt'), 'x')
    await turn(h, agent, [['read_file', { path: 'x.txt' }]])
    expect(userTexts(h.scripted.requests[0]!)[1]).toMatch(/adds context:\nOpen issues: 3$/)
    expect(toolResults(h, agent)[0]).toMatchObject({ ok: true })
  })

  it('permissionDecision "ask" puts the call to a person, and denies it when nobody can answer', async () => {
    const bin = await binDir()
    const ask = await script(bin, 'ask.sh', `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"this deploys"}}'`)
    const { h, agent } = await start([{ event: 'PreToolUse', command: ask }])
    await turn(h, agent, [['run_command', { command: 'echo deploy' }]])
    expect(toolResults(h, agent)[0]!.denied.reason).toMatch(/ask.sh" asks a person: this deploys, and nobody is there to answer \(an unattended run denies such calls\)$/)
    const asked: string[] = []
    h.root.on('permissions/ask', (request) => (asked.push(request.why), Promise.resolve({ kind: 'allow', scope: 'once', by: 'test' })))
    await turn(h, agent, [['run_command', { command: 'echo deploy' }]])
    expect(asked).toEqual([expect.stringMatching(/ask.sh" asks a person: this deploys$/)])
    expect(toolResults(h, agent)[1]).toMatchObject({ ok: true })
  })
})
