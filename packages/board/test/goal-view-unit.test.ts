import type { SessionRecord } from '@goalkeeper/session'
import { describe, expect, it } from 'vitest'
import { clean, goalView, HEAD_CHARS, TAIL_CHARS } from '../src/goal-view.ts'

let seq = 0
const record = (type: string, data: unknown): SessionRecord => ({ seq: seq++, at: 1000 + seq, type, data })

describe('goal view', () => {
  it('one entry per turn: round number, tools with results, edits as diffs, denials as stops, spend; the answer', () => {
    const records = [
      record('session/header', { cwd: '/w' }),
      record('turn/start', { turn: 1 }),
      record('user/message', { id: 'm', role: 'user', content: [], source: { kind: 'goal', goalId: 'g', revision: 1, round: 1 } }),
      record('assistant/message', { turn: 1, step: 1, text: 'editing', toolCalls: [] }),
      record('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'edit_file', arguments: JSON.stringify({ path: 'a.txt', old_string: 'x\ny', new_string: 'z' }) }),
      record('tool/result', { turn: 1, step: 1, callId: 'c1', ok: true, content: 'edited' }),
      record('tool/call', { turn: 1, step: 1, callId: 'c2', name: 'run_command', arguments: '{"command":"rm -rf /"}' }),
      record('tool/result', { turn: 1, step: 1, callId: 'c2', ok: false, content: '', denied: { by: 'loop-guard', reason: 'same call again' } }),
      record('goal/usage', { goalId: 'g', round: 1, turn: 1, step: 1, tokens: 10, costUsd: 0.5, activeTimeMs: 7 }),
      record('goal/usage', { goalId: 'g', round: 1, turn: 1, step: 2, tokens: 5, costUsd: null, activeTimeMs: 3 }),
      record('context/compacted', { turn: 1, step: 2, reason: 'threshold', method: 'summary', uptoSeq: 3 }),
      record('assistant/message', { turn: 1, step: 2, text: 'Done \u001b[1mnow\u001b[0m', toolCalls: [] }),
      record('turn/end', { turn: 1, outcome: { kind: 'completed' } }),
    ]
    const view = goalView('s', records)
    expect(view.cwd).toBe('/w')
    expect(view.answer).toBe('Done now')
    const [round] = view.rounds
    expect(round).toMatchObject({ round: 1, turn: 1, outcome: 'completed', stops: ['loop-guard: same call again'], compactions: [{ reason: 'threshold', method: 'summary' }] })
    expect(round.usage).toEqual({ tokens: 15, costUsd: null, activeTimeMs: 10, calls: 2 })
    expect(round.tools[0].diff).toEqual({ path: 'a.txt', lines: [['-', 'x'], ['-', 'y'], ['+', 'z']] })
    expect(round.tools[1]).toMatchObject({ ok: false, deniedBy: 'loop-guard', result: 'same call again' })
  })

  it('cuts long texts (results to their tail, model text to its head) and drops control characters', () => {
    const long = `${'a'.repeat(HEAD_CHARS)}END`
    const view = goalView('s', [
      record('turn/start', { turn: 1 }),
      record('assistant/message', { turn: 1, step: 1, text: long, toolCalls: [] }),
      record('tool/call', { turn: 1, step: 1, callId: 'c', name: 'read_file', arguments: '{}' }),
      record('tool/result', { turn: 1, step: 1, callId: 'c', ok: true, content: `START${'b'.repeat(TAIL_CHARS)}` }),
    ])
    expect(view.rounds[0].text.length).toBe(HEAD_CHARS + 1)
    expect(view.rounds[0].tools[0].result).toBe(`…${'b'.repeat(TAIL_CHARS)}`)
    expect(clean('a\u001b[31mb\u001b]0;title\u0007c\u0000d\te\nf')).toBe('abcd\te\nf')
  })
})
