// Every line a CLI test reads with `jsonLines` is checked against the documented schema of --json output, so
// a new line type or field that the schema does not describe fails the test that first prints it.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { Ajv, type ValidateFunction } from 'ajv'

/** The schema file of the host package, as users get it (the CLI's --json contract). */
export const JSON_OUTPUT_SCHEMA = path.resolve(import.meta.dirname, '../../host/schema/json-output.schema.json')

let validate: ValidateFunction | undefined

/** Why `line` is not a --json output line as the schema documents it, or undefined when it is. */
export function jsonOutputProblem(line: unknown): string | undefined {
  validate ??= new Ajv({ allErrors: true, strict: true, allowUnionTypes: true }).compile(JSON.parse(readFileSync(JSON_OUTPUT_SCHEMA, 'utf8')))
  if (validate(line)) return undefined
  return (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}${error.params ? ` ${JSON.stringify(error.params)}` : ''}`).join('; ')
}
