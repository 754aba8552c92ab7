// Reading a finished hook process as the contract says: exit codes, plain text, JSON fields, and garbage.
import { describe, expect, it } from 'vitest'
import { readAnswer, type ProcessResult } from '../src/index.ts'

const result = (over: Partial<ProcessResult>): ProcessResult =>
  ({ exitCode: 0, signal: null, stdout: '', stderr: '', durationMs: 1, timedOut: false, outputCut: false, ...over })

describe('readAnswer', () => {
  it('exit codes: 0 ok, 2 blocked with stderr, others failed with the last lines of stderr', () => {
    expect(readAnswer('turn-end', result({}), 1000)).toEqual({ outcome: 'ok' })
    expect(readAnswer('turn-end', result({ exitCode: 2, stderr: ' keep going \n', stdout: '{"decision":"approve"}' }), 1000)).toEqual({ outcome: 'blocked', block: 'keep going' })
    expect(readAnswer('turn-end', result({ exitCode: 2 }), 1000).block).toMatch(/without saying why/)
    expect(readAnswer('turn-end', result({ exitCode: 1, stderr: 'a\nb\nc\nd\ne\nf\n' }), 1000)).toEqual({ outcome: 'failed', problem: 'exit 1: b\nc\nd\ne\nf' })
    expect(readAnswer('turn-end', result({ exitCode: null, signal: 'SIGKILL', timedOut: true }), 2000)).toEqual({ outcome: 'timeout', problem: 'killed after 2 s (its timeout)' })
    expect(readAnswer('turn-end', result({ exitCode: null, spawnError: 'spawn /bin/sh ENOENT' }), 1000)).toEqual({ outcome: 'failed', problem: 'could not start: spawn /bin/sh ENOENT' })
  })

  it('plain stdout is context for session-start and prompt-submit only', () => {
    expect(readAnswer('prompt-submit', result({ stdout: 'today is Tuesday\n' }), 1000)).toEqual({ outcome: 'ok', context: 'today is Tuesday' })
    expect(readAnswer('before-tool-call', result({ stdout: 'checking...\n' }), 1000)).toEqual({ outcome: 'ok' })
  })

  it('reads the JSON decision fields', () => {
    const json = (value: unknown) => readAnswer('before-tool-call', result({ stdout: JSON.stringify(value) }), 1000)
    expect(json({ decision: 'block', reason: 'no' })).toEqual({ outcome: 'ok', block: 'no' })
    expect(json({ continue: false, stopReason: 'halt', systemMessage: 'bye' })).toEqual({ outcome: 'ok', stop: 'halt', systemMessage: 'bye' })
    expect(json({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'why', updatedInput: { a: 1 }, additionalContext: ' ctx ' } }))
      .toEqual({ outcome: 'ok', permission: 'deny', permissionReason: 'why', updatedInput: { a: 1 }, context: 'ctx' })
    expect(json({ suppressOutput: true, continue: true })).toEqual({ outcome: 'ok' })
  })

  it('garbage: JSON that does not parse, is cut, is not an object, or has fields of the wrong kind', () => {
    const read = (stdout: string, outputCut = false) => readAnswer('before-tool-call', result({ stdout, outputCut }), 1000)
    expect(read('{"decision": ')).toMatchObject({ outcome: 'garbage', problem: expect.stringMatching(/^its output is not valid JSON/) })
    expect(read('{"a": "xxxx', true)).toMatchObject({ outcome: 'garbage', problem: 'its JSON output was cut at maxOutput and can not be read' })
    expect(read('[1, 2]')).toMatchObject({ outcome: 'garbage', problem: 'its JSON output is not an object' })
    expect(read('{"decision": "maybe", "hookSpecificOutput": {"permissionDecision": "perhaps", "updatedInput": "x"}}')).toEqual({
      outcome: 'garbage',
      problem: 'its JSON answer is not understood: decision "maybe" is not "block" or "approve"; permissionDecision "perhaps" is not allow, deny or ask; updatedInput is not an object',
    })
  })
})
