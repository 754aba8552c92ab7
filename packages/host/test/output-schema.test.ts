// The schema file of --output-schema read and compiled (run/output-schema.ts): the dialect its $schema names,
// formats checked, and the problems of an answer phrased with where they are. The CLI paths are in cli-output-schema.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { loadOutputSchema } from '../src/commands/run/output-schema.ts'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

function schemaFile(name: string, schema: unknown): { dir: string; name: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gk-schema-'))
  dirs.push(dir)
  writeFileSync(path.join(dir, name), JSON.stringify(schema))
  return { dir, name }
}

describe('loadOutputSchema', () => {
  it('compiles draft-07, 2019-09 and 2020-12 (the default) by their $schema', async () => {
    const draft7 = schemaFile('d7.json', { $schema: 'http://json-schema.org/draft-07/schema#', definitions: { n: { type: 'integer' } }, type: 'object', properties: { n: { $ref: '#/definitions/n' } } })
    const draft2019 = schemaFile('d19.json', { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', properties: { n: { type: 'integer' } } })
    const draft2020 = schemaFile('d20.json', { type: 'array', prefixItems: [{ type: 'integer' }] })
    for (const { dir, name } of [draft7, draft2019]) {
      const schema = (await loadOutputSchema(dir, name))!
      expect(schema.check('{"n": 1}')).toEqual({ valid: true, value: { n: 1 } })
      expect(schema.check('{"n": "x"}')).toEqual({ valid: false, errors: ['/n must be integer'] })
    }
    expect((await loadOutputSchema(draft2020.dir, draft2020.name))!.check('["x"]')).toEqual({ valid: false, errors: ['/0 must be integer'] })
  })

  it('names the schema after its file, checks formats, and phrases each problem with where it is', async () => {
    const { dir, name } = schemaFile('release notes.v2.json', {
      type: 'object',
      properties: { when: { type: 'string', format: 'date-time' }, kind: { enum: ['major', 'minor'] } },
      required: ['when'],
      additionalProperties: false,
    })
    const schema = (await loadOutputSchema(dir, name))!
    expect(schema.request.name).toBe('release_notes')
    expect(schema.file).toBe(name)
    expect(schema.check('{"when": "yesterday", "kind": "patch", "extra": true}')).toEqual({ valid: false, errors: [
      '/ has a property the schema does not allow: "extra"',
      '/when must match format "date-time"',
      '/kind must be one of "major", "minor"',
    ] })
    expect(schema.check('```json\n{"when": "2026-12-01T20:00:00Z"}\n```')).toMatchObject({ valid: false, errors: [expect.stringMatching(/^the answer is not JSON: /)] })
    expect(schema.check('  {"when": "2026-12-01T20:00:00Z"}\n')).toEqual({ valid: true, value: { when: '2026-12-01T20:00:00Z' } })
    expect(schema.check(undefined)).toEqual({ valid: false, errors: ['there is no answer in text'] })
  })

  it('refuses a schema that is not an object, with exit 64', async () => {
    const { dir, name } = schemaFile('list.json', [{ type: 'string' }])
    await expect(loadOutputSchema(dir, name)).rejects.toThrow(expect.objectContaining({ exitCode: 64, message: `--output-schema ${path.join(dir, name)}: the schema must be a JSON object` }))
    expect(await loadOutputSchema(dir, undefined)).toBeUndefined()
  })
})
