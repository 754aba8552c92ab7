import { describeError } from '@goalkeeper/kit'
import { describeValue } from './describe.ts'
import { joinPath } from './env.ts'

interface Issue {
  message: string
  path?: ReadonlyArray<PropertyKey | { key: PropertyKey }>
}

interface StandardSchema {
  '~standard': { validate(value: unknown): { issues?: readonly Issue[] } | Promise<unknown> }
}

function isStandardSchema(value: unknown): value is StandardSchema {
  return !!value && typeof (value as StandardSchema)['~standard']?.validate === 'function'
}

/**
 * Validates an entry's config against the plugin's `Config` (any Standard Schema, in practice schemastery)
 * and returns `config.path: problem` for the first issue, or undefined when valid. Cordis validates again
 * in `ctx.plugin`; doing it here first gives a message that names the exact field.
 */
export function checkConfig(schema: unknown, config: unknown): string | undefined {
  if (!isStandardSchema(schema)) return undefined
  let result
  try {
    result = schema['~standard'].validate(config)
  } catch (error) {
    return `config: ${describeError(error)}`
  }
  if (!result || 'then' in result || !result.issues?.length) return undefined
  return formatIssue(result.issues[0], config)
}

function formatIssue(issue: Issue, config: unknown): string {
  const keys = (issue.path ?? []).map((part) => (typeof part === 'object' ? part.key : part))
  let path = 'config'
  let actual = config
  for (const key of keys) {
    path = joinPath(path, typeof key === 'number' ? key : String(key))
    actual = actual && typeof actual === 'object' ? (actual as Record<PropertyKey, unknown>)[key as string] : undefined
  }
  // schemastery prefixes its messages with the path (`$.maxSteps expected number but got x`) and prints
  // the value unquoted; the path is already in front and a quoted value is clearer.
  let message = issue.message.replace(/^\$\S*\s+/, '')
  const expected = /^expected (.+?) but got /.exec(message)
  if (expected) message = `expected ${withArticle(expected[1])}, got ${describeValue(actual)}`
  return `${path}: ${message}`
}

function withArticle(noun: string): string {
  if (/^(a|an|the)\s/.test(noun) || /[^a-z ]/.test(noun)) return noun
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`
}
