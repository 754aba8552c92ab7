// `goalkeeper show` as a function of the records: the transcript rendered without a CLI or a session file.
import type { Goal } from '@goalkeeper/goal'
import type { SessionRecord, UserMessage } from '@goalkeeper/session'
import { describe, expect, it } from 'vitest'
import { renderTranscript } from '../src/commands/show/transcript.ts'

// Local time, so that the transcript's clock reads 21:14:05 in every time zone.
const AT = new Date(2026, 10, 29, 21, 14, 5).getTime()
const CREATED = Date.UTC(2026, 10, 29, 20, 0, 0)

function log(...entries: [type: string, data: unknown][]): SessionRecord[] {
  return entries.map(([type, data], seq) => ({ seq, at: AT, type, data }))
}

const header = { version: 1, id: '20261129-2114-k3v9qa', createdAt: CREATED, cwd: '/work/app' }

const goal = (changes: Partial<Goal> = {}): Goal => ({
  id: 'g1',
  objective: 'Summarise the workspace',
  phase: 'active',
  revision: 1,
  maxGoalRounds: 5,
  roundsStarted: 0,
  createdAt: CREATED,
  updatedAt: CREATED,
  ...changes,
})

const text = (value: string) => [{ type: 'text' as const, text: value }]
const human = (id: string, value: string): UserMessage => ({ id, content: text(value), source: { kind: 'human' } })
const round = (id: string, revision: number, number: number, prompt: string): UserMessage => ({
  id,
  content: text(prompt),
  source: { kind: 'goal', goalId: 'g1', revision, round: number },
})

describe('renderTranscript', () => {
  it('renders turns, messages, tool calls and results, goal changes and outcomes', () => {
    const records = log(
      ['session/header', header],
      ['input/queued', { message: human('m1', 'list the files') }],
      ['turn/start', { turn: 1 }],
      ['user/message', human('m1', 'list the files')],
      ['step/start', { turn: 1, step: 1 }],
      ['assistant/message', { turn: 1, step: 1, text: 'Looking.', toolCalls: [] }],
      ['tool/call', { turn: 1, step: 1, callId: 'c1', name: 'list_files', arguments: '{ "path": "." }' }],
      ['tool/result', { turn: 1, step: 1, callId: 'c1', ok: true, content: 'README.md\nsrc/' }],
      ['tool/call', { turn: 1, step: 1, callId: 'c2', name: 'read_file', arguments: '{"path":"gone.md"}' }],
      ['tool/result', { turn: 1, step: 1, callId: 'c2', ok: false, content: 'no such file', error: { code: 'NOT_FOUND', message: 'no such file' } }],
      ['step/end', { turn: 1, step: 1 }],
      ['assistant/message', { turn: 1, step: 2, text: '  Two entries.\nREADME.md and src/.  ', toolCalls: [] }],
      ['turn/end', { turn: 1, outcome: { kind: 'completed' } }],
      ['goal/change', { op: 'create', goal: goal() }],
      ['turn/start', { turn: 2 }],
      ['turn/end', { turn: 2, outcome: { kind: 'error', code: 'AUTH', message: 'bad key' } }],
      ['custom/thing', { note: 'from a plugin' }],
    )
    expect(renderTranscript(records, { full: false })).toEqual([
      'session 20261129-2114-k3v9qa, started 2026-11-29T20:00:00.000Z',
      '  in /work/app',
      '',
      'turn 1  21:14:05',
      '  user: list the files',
      '  assistant: Looking.',
      '  tool list_files {"path":"."}',
      '    -> README.md',
      '       src/',
      '  tool read_file {"path":"gone.md"}',
      '    !! NOT_FOUND: no such file',
      '  assistant: Two entries.\n  README.md and src/.',
      '  turn 1 completed',
      '  goal set: "Summarise the workspace" (at most 5 rounds)',
      '',
      'turn 2  21:14:05',
      '  turn 2 failed: AUTH: bad key',
      '  [custom/thing] {"note":"from a plugin"}',
    ])
  })

  it('shows each judgement of a completion and what the completion stood on', () => {
    const judged = { attempts: 2, rejectionsInARow: 0, last: { judge: 'cheap', verdict: 'met' as const, accepted: true, reasons: ['ok'], missing: [], diff: null } }
    const records = log(
      ['session/header', header],
      ['goal/judgement', { goalId: 'g1', judge: 'cheap', verdict: 'not-met', accepted: false, reasons: ['The test fails.', 'No docs.'], missing: [], diff: null }],
      ['goal/judgement', { goalId: 'g1', judge: 'cheap', verdict: 'met', accepted: true, reasons: ['All done.'], missing: [], diff: { summary: 'a', sha256: 'b'.repeat(64) } }],
      ['goal/change', { op: 'complete', goal: goal({ phase: 'complete', revision: 2, roundsStarted: 2, judgement: judged }) }],
    )
    expect(renderTranscript(records, { full: false }).slice(-3)).toEqual([
      '  judge cheap: not-met, completion refused: The test fails. No docs.',
      '  judge cheap: met, completion accepted: All done.',
      '  goal complete after round 2/5 (judged met by cheap)',
    ])
  })

  it('ends with what a complete goal stood on, or what kept an open one from completing', () => {
    const checked = { attempts: 1, failures: 0, last: { command: 'npm test', ok: true, exitCode: 0 } }
    const judged = { attempts: 1, rejectionsInARow: 0, last: { judge: 'cheap', verdict: 'met' as const, accepted: true, reasons: ['All done.'], missing: [], diff: null } }
    const complete = log(
      ['session/header', header],
      ['goal/change', { op: 'create', goal: goal({ verify: ['npm test'] }) }],
      ['goal/check', { goalId: 'g1', command: 'npm test', ok: true, exitCode: 0, output: 'ok' }],
      ['goal/judgement', { goalId: 'g1', ...judged.last }],
      ['goal/change', { op: 'complete', goal: goal({ phase: 'complete', revision: 2, verify: ['npm test'], verification: checked, judgement: judged }) }],
    )
    expect(renderTranscript(complete, { full: false }).at(-1)).toBe('goal complete (verified: 1 check passed; judged met by cheap)')
    const open = log(
      ['session/header', header],
      ['goal/change', { op: 'create', goal: goal({ verify: ['npm test'] }) }],
      ['goal/check', { goalId: 'g1', command: 'npm test', ok: false, exitCode: 2, output: 'failed' }],
    )
    expect(renderTranscript(open, { full: false }).at(-1)).toBe('goal active (disarmed); not complete: check `npm test` failed with exit code 2')
  })

  it('shows tokens and cost per turn and in total (to the cent), checks with their exit codes, and the goal\'s spend against its budgets; never goal/usage raw', () => {
    const usage = (inputTokens: number, outputTokens: number, cachedInputTokens = 0) => ({ inputTokens, outputTokens, cachedInputTokens })
    const records = log(
      ['session/header', header],
      ['goal/change', { op: 'create', goal: goal({ budgets: { tokens: 10_000, costUsd: 0.005 }, verify: ['npm test'] }) }],
      ['turn/start', { turn: 1 }],
      ['user/message', round('r1', 1, 1, 'round one')],
      ['assistant/message', { turn: 1, step: 1, text: '', toolCalls: [], usage: usage(1000, 200, 400) }],
      ['goal/usage', { goalId: 'g1', round: 1, turn: 1, step: 1, tokens: 800, costUsd: 0.0051062500000000005, activeTimeMs: 1000 }],
      ['assistant/message', { turn: 1, step: 2, text: 'Done?', toolCalls: [], usage: usage(1100, 100) }],
      ['goal/usage', { goalId: 'g1', round: 1, turn: 1, step: 2, tokens: 1200, costUsd: 0.004, activeTimeMs: 1000 }],
      ['goal/check', { goalId: 'g1', command: 'npm test', ok: false, exitCode: 1, output: '1 test failed\n[Exit code 1 after 0.4 s.]' }],
      ['turn/end', { turn: 1, outcome: { kind: 'completed' } }],
      ['turn/start', { turn: 2 }],
      ['user/message', round('r2', 1, 2, 'round two')],
      ['assistant/message', { turn: 2, step: 1, text: '', toolCalls: [], usage: usage(500, 100) }],
      ['goal/usage', { goalId: 'g1', round: 2, turn: 2, step: 1, tokens: 600, costUsd: 0.006, activeTimeMs: 2000 }],
      ['goal/check', { goalId: 'g1', command: 'npm test', ok: true, exitCode: 0, output: 'all passed\n[Exit code 0 after 0.3 s.]' }],
      ['turn/end', { turn: 2, outcome: { kind: 'completed' } }],
      ['turn/start', { turn: 3 }],
      ['user/message', human('m3', 'thanks')],
      ['assistant/message', { turn: 3, step: 1, text: 'You are welcome.', toolCalls: [], usage: usage(300, 10) }],
      ['turn/end', { turn: 3, outcome: { kind: 'completed' } }],
    )
    const lines = renderTranscript(records, { full: false })
    expect(lines.filter((line) => /turn \d+ completed|check|goal spent|total|goal\/usage/.test(line))).toEqual([
      '  check `npm test` failed (exit code 1)',
      '  turn 1 completed (2 model calls, 2,000 tokens, $0.01)',
      '  check `npm test` passed (exit code 0)',
      '  turn 2 completed (1 model call, 600 tokens, $0.01)',
      // A turn outside the goal is not priced: no cost rather than a guess.
      '  turn 3 completed (1 model call, 310 tokens)',
      // Summed from the goal/usage records to the last call, as the goal's budgets count them.
      'goal spent: tokens 2,600 of 10,000, cost $0.02 of $0.005, time 4s, rounds 2 of 5',
      'total: 4 model calls, 2,910 tokens, $0.02 (tokens are input - cached input + output, as goal budgets count them; cost of goal rounds)',
    ])
    // A failed check shows its output's tail; a passing one only with --full.
    expect(lines[lines.indexOf('  check `npm test` failed (exit code 1)') + 1]).toBe('       1 test failed')
    expect(lines[lines.indexOf('  check `npm test` passed (exit code 0)') + 1]).toMatch(/^ {2}turn 2 completed/)
    expect(renderTranscript(records, { full: true })).toContain('       all passed')
    const timedOut = log(['goal/check', { goalId: 'g1', command: 'sleep 99', ok: false, exitCode: null, output: '[Timed out after 300 ms; the command and its child processes were killed.]' }])
    expect(renderTranscript(timedOut, { full: false })[0]).toBe('  check `sleep 99` failed (no exit code: timed out or stopped)')
  })

  it('shows the records of hooks, webhooks, permissions, the fleet and the store as text; only an unregistered type raw', () => {
    const records = log(
      ['hook/run', { event: 'PreToolUse', hook: 'lint', exitCode: 2, durationMs: 40, outcome: 'blocked', decisions: ['block'] }],
      ['hook/run', { event: 'Stop', hook: 'notify', exitCode: null, signal: 'SIGKILL', durationMs: 5000, outcome: 'timeout', problem: 'timed out after 5000 ms' }],
      ['notify/delivery', { id: 'msg_1', type: 'goal.completed', url: 'https://hooks.example/in', attempt: 2, status: 200, durationMs: 12, outcome: 'delivered' }],
      ['notify/delivery', { id: 'msg_2', type: 'goal.blocked', url: 'https://hooks.example/in', attempt: 1, status: null, error: 'ECONNREFUSED', durationMs: 3, outcome: 'retry' }],
      ['permission/asked', { turn: 1, step: 1, callId: 'c1', tool: 'run_command', why: 'runs a command', answer: 'session', by: 'chat' }],
      ['fleet/claim', { worker: 'w1', job: 'j1', attempt: 2, takeover: true, rearmed: true, phase: 'active' }],
      ['fleet/push', { worker: 'w1', branch: 'goal/j1', commit: '0123456789abcdef0123', round: 3 }],
      ['fleet/release', { worker: 'w1', job: 'j1', phase: 'paused', rounds: 3 }],
      ['session/adopted', { unsignedLines: 12 }],
      ['session/truncated', { lastSeq: 40, reason: 'the file ends before its seal' }],
      ['session/full', { maxBytes: 1000, bytes: 1004 }],
      ['session/checkpoint', { reason: 'compaction', parts: { 'agent-loop': { history: { entries: [], calls: [] } }, goal: { usedIds: [], lastAt: 0 } } }],
      ['custom/thing', { note: 'from a plugin' }],
    )
    expect(renderTranscript(records, { full: false })).toEqual([
      '  hook PreToolUse "lint": blocked: block (exit 2, 40 ms)',
      '  hook Stop "notify": timeout (killed by SIGKILL, 5000 ms): timed out after 5000 ms',
      '  webhook goal.completed to https://hooks.example/in: delivered (try 2, HTTP 200, 12 ms)',
      '  webhook goal.blocked to https://hooks.example/in: retry (try 1, ECONNREFUSED, 3 ms)',
      '  permission for run_command allowed for the session by chat: runs a command',
      '  worker w1 took job j1 (attempt 2, taken over from a lost worker, goal active)',
      '  worker w1 pushed round 3 to goal/j1 (0123456789ab)',
      '  worker w1 gave job j1 back to the queue (goal paused after 3 rounds)',
      "  adopted: the 12 unsigned lines before this one were signed on a person's word",
      '!! the cut end of the log was accepted as lost (its last record was seq 40): the file ends before its seal',
      '!! the log reached its size limit (1004 of 1000 bytes): nothing after this was written',
      '  checkpoint (after a compaction): agent-loop, goal',
      '  [custom/thing] {"note":"from a plugin"}',
    ])
  })

  it('shows who denied a call and how its arguments were rewritten', () => {
    const records = log(
      ['session/header', header],
      ['turn/start', { turn: 1 }],
      ['tool/call', { turn: 1, step: 1, callId: 'c1', name: 'run_command', arguments: '{"command":"rm -rf /"}' }],
      ['tool/result', { turn: 1, step: 1, callId: 'c1', ok: false, content: 'The call was denied by guard: no', error: { code: 'DENIED', message: 'The call was denied by guard: no' }, denied: { by: 'guard', reason: 'no' } }],
      ['tool/call', { turn: 1, step: 1, callId: 'c2', name: 'run_command', arguments: '{"command":"ls","timeout_ms":900000}' }],
      ['tool/result', { turn: 1, step: 1, callId: 'c2', ok: true, content: 'a', rewrites: [{ by: 'cap', reason: 'capped', arguments: '{"command":"ls","timeout_ms":5000}' }] }],
    )
    expect(renderTranscript(records, { full: false }).slice(-4)).toEqual([
      '    !! DENIED: The call was denied by guard: no',
      '  tool run_command {"command":"ls","timeout_ms":900000}',
      '    -> a',
      '       (arguments rewritten by cap: capped) {"command":"ls","timeout_ms":5000}',
    ])
  })

  it("names a goal round's objective from the goal records of its revision, not from the prompt text", () => {
    const prompt = '<goal_round>\nObjective: "what the prompt says"\nRound: 1/5\n</goal_round>'
    const records = log(
      ['session/header', { ...header, parent: { id: '20261128-0900-aaaaaa', seq: 12 } }],
      ['goal/change', { op: 'create', goal: goal() }],
      ['turn/start', { turn: 1 }],
      ['user/message', round('r1', 1, 1, prompt)],
      ['turn/end', { turn: 1, outcome: { kind: 'aborted', cause: 'user' } }],
      ['goal/change', { op: 'edit', goal: goal({ revision: 2, objective: 'Write NOTES.md\nand read it back', roundsStarted: 1 }) }],
      ['turn/start', { turn: 2 }],
      ['user/message', round('r2', 2, 2, prompt)],
      ['turn/end', { turn: 2, outcome: { kind: 'max-tokens' } }],
      // A round of a revision the log never recorded: no objective to show.
      ['input/queued', { message: round('r3', 7, 3, prompt) }],
      ['input/cancelled', { messageId: 'r3', reason: 'stale' }],
      ['input/queued', { message: round('r4', 2, 3, prompt) }],
    )
    expect(renderTranscript(records, { full: false })).toEqual([
      'session 20261129-2114-k3v9qa, started 2026-11-29T20:00:00.000Z',
      '  in /work/app, forked from 20261128-0900-aaaaaa at seq 12',
      '  goal set: "Summarise the workspace" (at most 5 rounds)',
      '',
      'turn 1  21:14:05',
      '  goal round 1 (objective "Summarise the workspace")',
      '  turn 1 cancelled (user)',
      '  goal edited: "Write NOTES.md and read it back" (at most 5 rounds, active)',
      '',
      'turn 2  21:14:05',
      '  goal round 2 (objective "Write NOTES.md\\nand read it back")',
      '  turn 2 stopped at the output token limit',
      '  input cancelled (stale): goal round 3',
      '',
      'waiting in the inbox (runs on resume):',
      '  goal round 3 (objective "Write NOTES.md\\nand read it back")',
    ])
  })

  it('with full, shows round prompts, plugin messages and tool results whole', () => {
    const long = Array.from({ length: 10 }, (_, index) => `line ${index + 1}`).join('\n')
    const records = log(
      ['goal/change', { op: 'create', goal: goal() }],
      ['turn/start', { turn: 1 }],
      ['user/message', round('r1', 1, 1, 'Round prompt\nsecond line')],
      ['user/message', { id: 'p1', content: text('stop repeating\nthat call'), source: { kind: 'plugin', name: 'loop-guard' } }],
      ['tool/call', { turn: 1, step: 1, callId: 'c1', name: 'run', arguments: '{"command":"ls"}' }],
      ['tool/result', { turn: 1, step: 1, callId: 'c1', ok: true, content: long }],
    )
    const full = renderTranscript(records, { full: true })
    expect(full.slice(3)).toEqual([
      '  goal round 1:\n  Round prompt\n  second line',
      '  [loop-guard] stop repeating\n  that call',
      '  tool run {"command":"ls"}',
      '    -> line 1',
      ...Array.from({ length: 9 }, (_, index) => `       line ${index + 2}`),
    ])
    const short = renderTranscript(records, { full: false })
    expect(short.slice(3, 5)).toEqual(['  goal round 1 (objective "Summarise the workspace")', '  [loop-guard] stop repeating that call'])
    expect(short.at(-1)).toBe('       [… 29 more characters]')
  })

  it('shows a compaction: why, how, what it replaced, the token estimates and the summary', () => {
    const summary = '[Summary of the earlier conversation]\nRead the config; fixed parse.ts.'
    const records = log(
      ['turn/start', { turn: 1 }],
      ['context/compacted', {
        turn: 1, step: 4, reason: 'threshold', method: 'summary', uptoSeq: 9, keptSeqs: [2], summary, elided: [12],
        replaced: 7, tokensBefore: 102_400, tokensAfter: 41_000, contextWindow: 128_000,
      }],
      ['context/compacted', {
        turn: 1, step: 9, reason: 'overflow', method: 'fallback', uptoSeq: -1, keptSeqs: [], summary: '', elided: [20, 21],
        replaced: 0, tokensBefore: 9000, tokensAfter: 4000, fallbackReason: 'the summary call failed: SERVER: down',
      }],
    )
    expect(renderTranscript(records, { full: false }).slice(2)).toEqual([
      '  history compacted (the request neared the context window; summary): 7 messages replaced, 1 tool output removed, about 102400 -> 41000 tokens of 128000',
      '    | [Summary of the earlier conversation]',
      '    | Read the config; fixed parse.ts.',
      '  history compacted (the model refused the request as too long; fallback): 2 tool outputs removed, about 9000 -> 4000 tokens',
      '    summary not used: the summary call failed: SERVER: down',
    ])
  })

  it('with a width: one line per event cut with an ellipsis, messages and warnings broken at spaces, unverified lines too', () => {
    const long = 'This answer goes on past the width of any narrow terminal, word after word after word.'
    const records = log(
      ['session/header', { ...header, cwd: `/work/${'deep/'.repeat(20)}app` }],
      ['turn/start', { turn: 1 }],
      ['user/message', human('m1', 'write the notes')],
      ['tool/call', { turn: 1, step: 1, callId: 'c1', name: 'write_file', arguments: JSON.stringify({ path: 'NOTES.md', content: long }) }],
      ['tool/result', { turn: 1, step: 1, callId: 'c1', ok: true, content: `Created NOTES.md\n${long}` }],
      ['assistant/message', { turn: 1, step: 2, text: long, toolCalls: [] }],
      ['turn/end', { turn: 1, outcome: { kind: 'completed' } }],
      ['turn/start', { turn: 2 }],
      ['assistant/message', { turn: 2, step: 1, text: long, toolCalls: [] }],
    )
    const width = 40
    const lines = renderTranscript(records, { full: false, width, integrity: { state: 'tampered', line: 9, reason: 'FILE:9: the signature does not match' } })
    // The header's directory is a path to copy: whole.
    expect(lines[1]).toBe(`  in ${records[0].data && (records[0].data as { cwd: string }).cwd}`)
    for (const line of lines.slice(2)) expect(Array.from(line).length, line).toBeLessThanOrEqual(width)
    expect(lines).toContain(`  tool write_file {"path":"NOTES.md","c…`)
    // The message loses no word, on the verified and on the unverified side.
    const verified = lines.slice(lines.indexOf('  assistant: This answer goes on past'), lines.indexOf('  turn 1 completed'))
    expect(verified.map((line) => line.trim()).join(' ')).toBe(`assistant: ${long}`)
    const unverified = lines.filter((line) => line.startsWith('unverified |'))
    expect(unverified.map((line) => line.slice('unverified |'.length).trim()).join(' ')).toBe(`assistant: ${long}`)
    // A warning is broken into lines too, every word kept.
    const warning = lines.slice(lines.indexOf('!! everything below was written by'), lines.indexOf(unverified[0]))
    expect(warning.map((line) => line.trim()).join(' ')).toBe('!! everything below was written by someone other than goalkeeper: unverified, never run (resume refuses this session)')
    // Without a width every line is whole.
    expect(renderTranscript(records, { full: false })).toContain(`  assistant: ${long}`)
  })
})
