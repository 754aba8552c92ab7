import type { OutputSchema } from './types.ts'

/** What `OutputSchema.name` may be (OpenAI's rule for `json_schema.name`, the strictest of the providers). */
export const OUTPUT_SCHEMA_NAME = /^[A-Za-z0-9_-]{1,64}$/

/**
 * The system prompt section that asks for an answer in the schema, for providers without a structured-output
 * option (or whose option only promises JSON, not the schema). Tool calls stay allowed: only the text the
 * model answers with is meant, so a model can still work before it answers.
 */
export function outputSchemaInstruction(output: OutputSchema): string {
  return [
    `Your final answer (the text you reply with once you call no more tools) must be exactly one JSON value, valid against the JSON Schema "${output.name}" below.`,
    'Write only the JSON: no Markdown code fence, no text before or after it.',
    JSON.stringify(output.schema),
  ].join('\n')
}
