// `--output-schema FILE` of run and goal: the final answer must be JSON valid against the schema, as with
// `codex exec --output-schema`. The file is read and compiled before anything runs; the provider is asked for
// the shape (request.outputSchema), and the answer is validated here, since no provider guarantees it.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { Command } from 'commander'
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv'
import { describeError, isRecord } from '@goalkeeper/kit'
import { OUTPUT_SCHEMA_NAME, type OutputSchema } from '@goalkeeper/model'
import { HostError } from '../../errors.ts'

export interface OutputSchemaOptions {
  outputSchema?: string
}

export function withOutputSchema(command: Command): Command {
  return command.option('--output-schema <file>', 'a JSON Schema the final answer must be valid JSON against (asked of the model; checked, with one retry); relative to --cwd')
}

/** How an answer fared against the schema. */
export type AnswerCheck = { valid: true; value: unknown } | { valid: false; errors: string[] }

/** A schema file, read and compiled: what the model is asked for, and the check of its answer. */
export interface AnswerSchema {
  /** The file as the command line named it, for messages. */
  file: string
  request: OutputSchema
  check(answer: string | undefined): AnswerCheck
}

/** Options shared by every dialect: strict catches a misspelt keyword; the rest of strict mode trips common valid schemas. */
const AJV_OPTIONS = { allErrors: true, strict: true, strictRequired: false, strictTypes: false, strictTuples: false, allowUnionTypes: true } as const

/**
 * The dialect a schema's `$schema` names; without one, draft 2020-12 (as the tool schemas). Ajv is imported
 * only with --output-schema: every other command (sessions, show, --help) starts without it.
 */
const DIALECTS: [pattern: RegExp, make: () => Promise<Ajv>][] = [
  [/^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/, async () => new (await import('ajv/dist/2020.js')).Ajv2020(AJV_OPTIONS)],
  [/^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/, async () => new (await import('ajv/dist/2019.js')).Ajv2019(AJV_OPTIONS)],
  [/^https?:\/\/json-schema\.org\/draft-07\/schema#?$/, async () => new (await import('ajv')).Ajv(AJV_OPTIONS)],
]

/** Reads and compiles `file` (relative to `cwd`); undefined without the option. Any problem is exit 64, naming the file. */
export async function loadOutputSchema(cwd: string, file: string | undefined): Promise<AnswerSchema | undefined> {
  if (file === undefined) return undefined
  const target = path.resolve(cwd, file)
  const refuse = (problem: string, hint: string) => new HostError(`--output-schema ${target}: ${problem}`, { hint })
  let text: string
  try {
    text = readFileSync(target, 'utf8')
  } catch (error) {
    throw refuse(`cannot read it: ${describeError(error)}`, 'name a file that holds a JSON Schema, e.g. {"type":"object","properties":{...}}')
  }
  let schema: unknown
  try {
    schema = JSON.parse(text)
  } catch (error) {
    throw refuse(`not JSON: ${describeError(error)}`, 'a JSON Schema is a JSON object, e.g. {"type":"object","properties":{...}}')
  }
  if (!isRecord(schema)) throw refuse('the schema must be a JSON object', 'write the schema as an object, e.g. {"type":"object"}')
  const dialect = schema.$schema === undefined ? DIALECTS[0] : DIALECTS.find(([pattern]) => typeof schema.$schema === 'string' && pattern.test(schema.$schema))
  if (!dialect) throw refuse(`unsupported $schema ${JSON.stringify(schema.$schema)}`, 'use draft 2020-12 (or leave $schema out), 2019-09 or draft-07')
  let validate: ValidateFunction
  try {
    const ajv = await dialect[1]()
    ;(await import('ajv-formats')).default.default(ajv)
    validate = ajv.compile(schema)
  } catch (error) {
    throw refuse(`not a valid JSON Schema: ${describeError(error)}`, 'fix the schema (draft 2020-12 unless its $schema names 2019-09 or draft-07)')
  }
  return {
    file,
    request: { name: schemaName(target), schema },
    check: (answer) => checkAnswer(validate, answer),
  }
}

/** `verdict` for `verdict.schema.json`: a name every provider takes, from the file's name. */
function schemaName(file: string): string {
  const stem = path.basename(file).split('.')[0].replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)
  return OUTPUT_SCHEMA_NAME.test(stem) ? stem : 'output'
}

function checkAnswer(validate: ValidateFunction, answer: string | undefined): AnswerCheck {
  if (answer === undefined || !answer.trim()) return { valid: false, errors: ['there is no answer in text'] }
  let value: unknown
  try {
    value = JSON.parse(answer)
  } catch (error) {
    return { valid: false, errors: [`the answer is not JSON: ${describeError(error)}`] }
  }
  if (validate(value)) return { valid: true, value }
  return { valid: false, errors: describeErrors(validate.errors) }
}

/** One line per problem, where in the answer and what is wrong, phrased so the model can repair it. */
function describeErrors(errors: readonly ErrorObject[] | null | undefined): string[] {
  const lines = (errors ?? []).map((error) => {
    const params = error.params as Record<string, unknown>
    const at = error.instancePath || '/'
    if (error.keyword === 'additionalProperties') return `${at} has a property the schema does not allow: "${params.additionalProperty}"`
    if (error.keyword === 'enum') return `${at} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
    return `${at} ${error.message ?? 'is invalid'}`
  })
  return [...new Set(lines)]
}
