// The schema of --json output (schema/json-output.schema.json): what it accepts and refuses, and that the
// README documents the same line types. Every CLI test's --json lines are validated by test-kit's jsonLines.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { JSON_OUTPUT_SCHEMA, jsonLines, jsonOutputProblem } from '@goalkeeper/test-kit'

const schema = JSON.parse(readFileSync(JSON_OUTPUT_SCHEMA, 'utf8'))
const readme = readFileSync(path.resolve(import.meta.dirname, '../README.md'), 'utf8')

describe('the --json output schema', () => {
  it('names the types the README documents, no more and no fewer', () => {
    const section = readme.slice(readme.indexOf('**`--json`.**'))
    const rows = section.slice(section.indexOf('|---'), section.indexOf('\n\n', section.indexOf('|---')))
    const documented = [...rows.matchAll(/^\| `([a-z-]+)`(?:, `([a-z-]+)`)? \|/gm)].flatMap((row) => row.slice(1).filter(Boolean))
    expect(documented.slice().sort()).toEqual(schema.properties.type.enum.slice().sort())
  })

  it('accepts the documented shapes', () => {
    const record = { seq: 0, at: 1, type: 'session/header', data: { id: 's1' } }
    for (const line of [
      { type: 'record', session: 's1', record },
      { type: 'record', session: 's1', record, unverified: true },
      { type: 'error', message: 'no such session', exitCode: 64 },
      { type: 'usage', session: 's1', turn: 1, usage: { inputTokens: 3, cachedInputTokens: 0, outputTokens: 2, reasoningTokens: 0, calls: 1 } },
      { type: 'retry', session: 's1', provider: 'openai', attempt: 1, of: 3, waitMs: 500, error: { code: 'RATE_LIMIT', message: 'slow down' } },
      { type: 'output-schema', session: 's1', attempt: 1, valid: false, errors: ['/ok must be boolean'] },
      { type: 'output-schema', session: 's1', attempt: 2, valid: true },
    ]) expect(jsonOutputProblem(line), JSON.stringify(line)).toBeUndefined()
  })

  it('refuses a line without a type, of an undocumented type, or of a documented type in another shape', () => {
    expect(jsonOutputProblem({ id: 's1', file: 'f' })).toMatch(/must have required property 'type'/)
    expect(jsonOutputProblem({ type: 'progress', text: 'x' })).toMatch(/\/type must be equal to one of the allowed values/)
    // show printed bare records before: a record line wraps one.
    expect(jsonOutputProblem({ type: 'record', seq: 0, at: 1, data: {} })).toMatch(/must have required property 'record'/)
    const check = { type: 'result', session: 's1', exitCode: 0, outcome: null, answer: 'ok', usage: null }
    expect(jsonOutputProblem({ ...check, goal: { id: 'g', objective: 'o', phase: 'complete', revision: 2, maxGoalRounds: 5, roundsStarted: 1, verification: { attempts: 1, failures: 0, last: { command: 'true', ok: true, exitCode: '0' } } } }))
      .toMatch(/\/goal\/verification\/last\/exitCode must be integer,null/)
    expect(() => jsonLines('{"type":"error","message":"x","exitCode":64}\n{"type":"nope"}\n')).toThrow(/^stdout line 2 is not --json output as the schema documents it: /)
  })
})
