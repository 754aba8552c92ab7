import { outputSchemaInstruction, type OutputSchema } from '@goalkeeper/model'
import type { StructuredOutput } from './config.ts'

/**
 * The `response_format` and the system prompt section that ask for an answer in `output`. It is sent on every
 * request of the agent's turns, as Codex does: OpenAI applies `response_format` to the text of a reply only,
 * so the model still calls tools freely and only its answers in text take the schema's shape.
 */
export function outputFormat(output: OutputSchema, mode: StructuredOutput): { responseFormat?: Record<string, unknown>; instruction?: string } {
  switch (mode) {
    case 'json_schema':
      return { responseFormat: { type: 'json_schema', json_schema: { name: output.name, schema: output.schema, strict: fitsStrictMode(output.schema) } } }
    case 'json_object':
      // JSON mode needs the word JSON in the prompt, and carries no schema: the instruction brings both.
      return { responseFormat: { type: 'json_object' }, instruction: outputSchemaInstruction(output) }
    case 'prompt':
      return { instruction: outputSchemaInstruction(output) }
  }
}

type Schema = Record<string, unknown>

const isSchema = (value: unknown): value is Schema => !!value && typeof value === 'object' && !Array.isArray(value)

/** Keywords strict mode does not take (composition other than anyOf, conditionals, open-ended property rules). */
const NOT_STRICT = ['allOf', 'oneOf', 'not', 'if', 'then', 'else', 'patternProperties', 'unevaluatedProperties', 'unevaluatedItems', 'propertyNames', 'dependentRequired', 'dependentSchemas']

/** Keywords whose value is one subschema, an array of them, or a map of them. */
const ONE = ['items', 'additionalItems', 'contains', 'not', 'if', 'then', 'else', 'propertyNames']
const MANY = ['anyOf', 'allOf', 'oneOf', 'prefixItems']
const MAPS = ['properties', '$defs', 'definitions', 'patternProperties', 'dependentSchemas']

/**
 * Whether `schema` keeps the rule strict mode enforces on every object (OpenAI refuses the request
 * otherwise): no other properties (`additionalProperties: false`) and each property required, with an
 * object at the root, and none of the keywords it does not support. Strict decoding is then a guarantee; a schema that does not fit is sent with
 * `strict: false`, where the model is guided by it but not held to it (the caller validates the answer).
 */
export function fitsStrictMode(schema: Schema): boolean {
  if (schema.type !== 'object') return false
  const fits = (node: unknown): boolean => {
    if (!isSchema(node)) return true
    if (NOT_STRICT.some((key) => key in node)) return false
    if (node.type === 'object' || isSchema(node.properties)) {
      const keys = Object.keys(isSchema(node.properties) ? node.properties : {})
      const required = Array.isArray(node.required) ? node.required : []
      if (node.additionalProperties !== false || keys.some((key) => !required.includes(key))) return false
    }
    return ONE.every((key) => fits(node[key]))
      && MANY.every((key) => !Array.isArray(node[key]) || (node[key] as unknown[]).every(fits))
      && MAPS.every((key) => !isSchema(node[key]) || Object.values(node[key] as Schema).every(fits))
  }
  return fits(schema)
}
