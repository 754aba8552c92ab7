import Ajv2020 from 'ajv/dist/2020.js'
import type { ErrorObject, ValidateFunction } from 'ajv'

const OPTIONS = {
  allErrors: true,
  strict: true,
  strictRequired: false,
  strictTypes: false,
  strictTuples: false,
  allowUnionTypes: true,
  validateFormats: false,
  useDefaults: true,
} as const

/**
 * One compiler per registry, so registries never share `$id`s. Strict mode catches typos in schemas
 * (unknown keywords) at registration; `strictRequired`/`strictTypes` stay off because valid, common
 * tool schemas trip them. Formats are annotations only (no ajv-formats). `useDefaults` fills declared
 * defaults, so tools see them in their arguments. Meta-schema validation is done by `checkSchema`
 * instead: compiling the 2020-12 meta-schema costs hundreds of milliseconds, paid once per process.
 */
export function createCompiler() {
  return new Ajv2020({ ...OPTIONS, validateSchema: false })
}

let metaValidator: Ajv2020 | undefined

/** Throws with ajv's description when `schema` is not a valid draft 2020-12 schema. */
export function checkSchema(schema: Record<string, unknown>) {
  metaValidator ??= new Ajv2020({ allErrors: true, strict: false })
  if (!metaValidator.validateSchema(schema)) throw new Error(`schema is invalid: ${metaValidator.errorsText(metaValidator.errors)}`)
}

export type Compiler = ReturnType<typeof createCompiler>
export type Validator = ValidateFunction

const at = (path: string) => (path ? `${path}: ` : '')

/** One line per problem, phrased so a model can repair its call. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string[] {
  const lines = (errors ?? []).map((error) => {
    const params = error.params as Record<string, unknown>
    switch (error.keyword) {
      case 'required':
        return `${at(error.instancePath)}missing required property "${params.missingProperty}"`
      case 'additionalProperties':
        return `${at(error.instancePath)}unexpected property "${params.additionalProperty}" (not in the schema)`
      case 'enum':
        return `${error.instancePath || 'arguments'} must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
      case 'const':
        return `${error.instancePath || 'arguments'} must be ${JSON.stringify(params.allowedValue)}`
      default:
        return `${error.instancePath || 'arguments'} ${error.message ?? 'is invalid'}`
    }
  })
  return [...new Set(lines)]
}

/** "path (required), start_line, end_line": a reminder of the expected shape, from the schema's top level. */
export function describeParameters(schema: Record<string, unknown>): string {
  const properties = Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {})
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : [])
  if (!properties.length) return 'no parameters ({})'
  return properties.map((name) => (required.has(name) ? `${name} (required)` : name)).join(', ')
}
