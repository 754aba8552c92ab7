// --output-schema FILE of run and goal, on the CLI as a child process: the model is asked for the schema
// (the scripted provider's request, a local OpenAI-compatible server's request body), the answer is checked
// with one retry, and an answer still invalid exits 7. Only the model is scripted.
import { existsSync } from 'node:fs'
import { readdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, delta, frame, jsonLines, localModelProject, readSession, run, sessionIdOf, sse, textReply, useOpenAIServers, useProject, type Project } from '@goalkeeper/test-kit'

const project = useProject()
const serve = useOpenAIServers()

const VERDICT = { type: 'object', properties: { ok: { type: 'boolean' }, note: { type: 'string' } }, required: ['ok', 'note'], additionalProperties: false }
const RETRY_PREFIX = 'Your final answer is not valid against the JSON Schema "verdict" it must follow:'

/** The project with verdict.json in its workspace. */
async function withSchema(script: string): Promise<Project> {
  const p = await project({ script })
  await writeFile(path.join(p.workspace, 'verdict.json'), JSON.stringify(VERDICT))
  return p
}

/** A model that answers `first` to the prompt and `second` to the retry message, and says on stderr what it was asked. */
const answers = (first: string, second: string) => `export default many((request) => {
  const last = textOf(request.messages.at(-1))
  say('asked ' + JSON.stringify(request.outputSchema))
  if (last.startsWith('Your final answer is not valid')) { say('retry ' + JSON.stringify(last)); return { text: ${JSON.stringify(second)} } }
  return { text: ${JSON.stringify(first)} }
})`

describe('goalkeeper --output-schema', { timeout: CLI_TIMEOUT }, () => {
  it('a valid first answer: the model was asked for the schema, --json carries the check and the parsed output', async () => {
    const p = await withSchema(answers('{"ok": true, "note": "all good"}', 'never'))
    const result = await run([...p.globals, '--json', 'run', '--output-schema', 'verdict.json', '--output-last-message', 'out.json', 'is it ok?'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain(`script: asked ${JSON.stringify({ name: 'verdict', schema: VERDICT })}\n`)
    expect(result.stderr).not.toContain('script: retry')
    const lines = jsonLines(result.stdout)
    expect(lines.filter((line) => line.type === 'output-schema')).toEqual([{ type: 'output-schema', session: expect.any(String), attempt: 1, valid: true }])
    expect(lines.at(-1)).toMatchObject({ type: 'result', exitCode: 0, answer: '{"ok": true, "note": "all good"}', output: { ok: true, note: 'all good' } })
    expect(await readFile(path.join(p.workspace, 'out.json'), 'utf8')).toBe('{"ok": true, "note": "all good"}\n')
  })

  it('an invalid answer, then a valid one: one retry turn gives the model the problems, exit 0', async () => {
    const p = await withSchema(answers('It is ok.', '{"ok": true, "note": "fixed"}'))
    // An absolute path, long enough to be shortened on stderr (it keeps its end).
    const file = path.join(p.workspace, 'verdict.json')
    const result = await run([...p.globals, 'run', '--output-schema', file, 'is it ok?'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('{"ok": true, "note": "fixed"}\n')
    expect(result.stderr).toMatch(/^goalkeeper: the answer does not fit …\S*\/workspace\/verdict\.json; asking once more:\ngoalkeeper: {3}the answer is not JSON: Unexpected token .*\n/m)
    for (const line of result.stderr.split('\n').filter((text) => text.startsWith('goalkeeper: the answer') || text.startsWith('goalkeeper:   '))) {
      expect(Array.from(line).length, line).toBeLessThanOrEqual(80)
    }
    const retry = `${RETRY_PREFIX}\n- the answer is not JSON: `
    expect(result.stderr).toContain(`script: retry ${JSON.stringify(retry).slice(0, -1)}`)
    // Both model calls asked for the schema; the retry is a plugin's message, not the person's.
    expect(result.stderr.match(/script: asked \{"name":"verdict"/g)).toHaveLength(2)
    const records = await readSession(p, sessionIdOf(result.stderr))
    const messages = records.filter((record) => record.type === 'user/message').map((record) => record.data)
    expect(messages.map((message) => message.source)).toEqual([{ kind: 'human' }, { kind: 'plugin', name: 'output-schema' }])
    expect(messages[1].content[0].text).toMatch(/^Your final answer is not valid against the JSON Schema "verdict" it must follow:\n- the answer is not JSON: .*\nAnswer again with only one JSON value valid against the schema: no other text, no Markdown code fence\.$/)
  })

  it('invalid twice: exit 7, the invalid answer still written to --output-last-message, --json names every problem', async () => {
    const p = await withSchema(answers('{"ok": "yes"}', '{"ok": "yes", "extra": 1}'))
    const result = await run([...p.globals, '--json', 'run', '--output-schema', 'verdict.json', '--output-last-message', 'out.json', 'is it ok?'])
    expect(result.code, result.stderr).toBe(7)
    const lines = jsonLines(result.stdout)
    expect(lines.filter((line) => line.type === 'output-schema')).toEqual([
      { type: 'output-schema', session: expect.any(String), attempt: 1, valid: false, errors: ['/ must have required property \'note\'', '/ok must be boolean'] },
      { type: 'output-schema', session: expect.any(String), attempt: 2, valid: false, errors: ['/ must have required property \'note\'', '/ has a property the schema does not allow: "extra"', '/ok must be boolean'] },
    ])
    const last = lines.at(-1)
    expect(last).toMatchObject({ type: 'result', exitCode: 7, answer: '{"ok": "yes", "extra": 1}' })
    expect(last).not.toHaveProperty('output')
    expect(result.stderr).toMatch(/^goalkeeper: the answer still does not fit verdict\.json:\ngoalkeeper: {3}\/ must have required property 'note'\n/m)
    expect(await readFile(path.join(p.workspace, 'out.json'), 'utf8')).toBe('{"ok": "yes", "extra": 1}\n')
  })

  it('a schema file that is not JSON, or not a valid JSON Schema, is refused before any model call: exit 64 naming the file', async () => {
    const p = await withSchema('export default many(() => { throw new Error("the model must not be called") })')
    await writeFile(path.join(p.workspace, 'broken.json'), '{"type": "object",')
    await writeFile(path.join(p.workspace, 'wrong.json'), '{"type": "strng"}')
    await writeFile(path.join(p.workspace, 'typo.json'), '{"type": "object", "propertes": {}}')
    const broken = await run([...p.globals, 'run', '--output-schema', 'broken.json', 'hello'])
    expect(broken.code).toBe(64)
    expect(broken.stderr).toMatch(/^goalkeeper: --output-schema \S+\/workspace\/broken\.json: not JSON: .* \(hint: a JSON Schema is a JSON object/)
    const wrong = await run([...p.globals, '--json', 'goal', '--output-schema', 'wrong.json', 'Finish'])
    expect(wrong.code).toBe(64)
    expect(jsonLines(wrong.stdout)).toEqual([{ type: 'error', exitCode: 64, message: expect.stringMatching(/^--output-schema \S+\/wrong\.json: not a valid JSON Schema: schema is invalid: data\/type must be equal to one of the allowed values/), hint: expect.any(String) }])
    const typo = await run([...p.globals, 'run', '--output-schema', 'typo.json', 'hello'])
    expect(typo.code).toBe(64)
    expect(typo.stderr).toContain('typo.json: not a valid JSON Schema: strict mode: unknown keyword: "propertes"')
    await writeFile(path.join(p.workspace, 'draft4.json'), '{"$schema": "http://json-schema.org/draft-04/schema#", "type": "object"}')
    const draft4 = await run([...p.globals, 'run', '--output-schema', 'draft4.json', 'hello'])
    expect(draft4.code).toBe(64)
    expect(draft4.stderr).toContain('draft4.json: unsupported $schema "http://json-schema.org/draft-04/schema#" (hint: use draft 2020-12 (or leave $schema out), 2019-09 or draft-07)')
    const missing = await run([...p.globals, 'run', '--output-schema', 'missing.json', 'hello'])
    expect(missing.code).toBe(64)
    expect(missing.stderr).toMatch(/missing\.json: cannot read it: ENOENT/)
    expect(existsSync(p.sessions) ? await readdir(p.sessions) : []).toEqual([])
  })

  it('goal: the completing round\'s answer is checked; an invalid one gets its retry turn after the goal completed', async () => {
    const p = await withSchema(`export default many((request) => {
      const last = request.messages.at(-1)
      if (last.role === 'user' && textOf(last).startsWith('Your final answer is not valid')) return { text: '{"ok": true, "note": "goal done"}' }
      const step = completeGoal(request)
      say('asked ' + JSON.stringify(request.outputSchema?.name))
      return step.toolCalls ? step : { text: 'Goal done.' }
    })`)
    const result = await run([...p.globals, '--json', 'goal', '--output-schema', 'verdict.json', 'Finish'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).not.toMatch(/script: asked undefined/)
    const lines = jsonLines(result.stdout)
    expect(lines.filter((line) => line.type === 'output-schema').map((line) => [line.attempt, line.valid])).toEqual([[1, false], [2, true]])
    expect(lines.at(-1)).toMatchObject({ type: 'result', exitCode: 0, goal: { phase: 'complete' }, output: { ok: true, note: 'goal done' } })
  })

  it('an OpenAI-compatible server receives the schema as response_format on every request, the one answered with a tool call too', async () => {
    const call = { index: 0, id: 'call_1', type: 'function', function: { name: 'list_dir', arguments: '{}' } }
    const server = await serve([sse(delta({ role: 'assistant', tool_calls: [call] }), delta({}, 'tool_calls'), frame('[DONE]')), textReply('{"ok": false, "note": "not yet"}')])
    const p = await project(localModelProject(server.url))
    await writeFile(path.join(p.workspace, 'verdict.json'), JSON.stringify(VERDICT))
    const result = await run([...p.globals, 'run', '--output-schema', 'verdict.json', 'is it ok?'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('{"ok": false, "note": "not yet"}\n')
    expect(server.received).toHaveLength(2)
    for (const { body } of server.received) {
      expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'verdict', schema: VERDICT, strict: true } })
      expect(body.tools.length).toBeGreaterThan(0)
    }
    expect(server.received[1].body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1' })
  })
})
