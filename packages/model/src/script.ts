import path from 'node:path'
import { stat } from 'node:fs/promises'
import { pathToFileURL } from 'node:url'
import { describeError, isRecord } from '@goalkeeper/kit'
import type { ScriptStep } from './types.ts'

const KEYS: Record<string, readonly string[]> = {
  reply: ['kind', 'text', 'reasoning', 'toolCalls', 'usage', 'delayMs'],
  error: ['kind', 'code', 'message', 'retryAfterMs', 'delayMs', 'text'],
  'max-tokens': ['kind', 'text', 'delayMs'],
  hang: ['kind', 'text'],
}

const isCount = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0

/** Why `value` is not a valid `ScriptResponse`, or undefined when it is. Unknown keys are refused to catch typos. */
export function checkResponse(value: unknown): string | undefined {
  if (!isRecord(value)) return `expected an object, got ${Array.isArray(value) ? 'an array' : typeof value}`
  const kind = value.kind ?? 'reply'
  const keys = typeof kind === 'string' ? KEYS[kind] : undefined
  if (!keys) return `unknown kind ${JSON.stringify(kind)} (expected reply, error, max-tokens or hang)`
  const unknown = Object.keys(value).filter((key) => !keys.includes(key))
  if (unknown.length) return `unknown key(s) ${unknown.map((k) => JSON.stringify(k)).join(', ')} for kind "${kind}" (allowed: ${keys.join(', ')})`
  for (const key of ['text', 'reasoning', 'message'] as const) {
    if (value[key] !== undefined && typeof value[key] !== 'string') return `"${key}" must be a string`
  }
  for (const key of ['delayMs', 'retryAfterMs'] as const) {
    if (value[key] !== undefined && !isCount(value[key])) return `"${key}" must be a non-negative number`
  }
  if (kind === 'error' && (typeof value.code !== 'string' || !value.code)) return 'an error step needs a non-empty string "code"'
  if (value.usage !== undefined) {
    const usage = value.usage
    if (!isRecord(usage) || !isCount(usage.inputTokens) || !isCount(usage.outputTokens)) {
      return '"usage" must be { inputTokens, outputTokens } with non-negative numbers'
    }
  }
  if (value.toolCalls !== undefined) {
    if (!Array.isArray(value.toolCalls)) return '"toolCalls" must be an array'
    for (const [index, call] of value.toolCalls.entries()) {
      const where = `toolCalls[${index}]`
      if (!isRecord(call)) return `${where} must be an object`
      if (typeof call.name !== 'string' || !call.name) return `${where} needs a non-empty string "name"`
      if (call.id !== undefined && (typeof call.id !== 'string' || !call.id)) return `${where}.id must be a non-empty string`
      if (call.arguments !== undefined && typeof call.arguments !== 'string' && !isRecord(call.arguments)) {
        return `${where}.arguments must be an object or a (possibly malformed) JSON string`
      }
      const extra = Object.keys(call).filter((key) => !['id', 'name', 'arguments'].includes(key))
      if (extra.length) return `${where} has unknown key(s) ${extra.join(', ')} (allowed: id, name, arguments)`
    }
  }
}

/** Validates script steps up front so a bad script fails when it is loaded, not in the middle of a run. */
export function checkSteps(steps: readonly unknown[], where: string): ScriptStep[] {
  steps.forEach((step, index) => {
    if (typeof step === 'function') return
    const problem = checkResponse(step)
    if (problem) throw new TypeError(`${where}[${index}]: ${problem}`)
  })
  return steps as ScriptStep[]
}

/**
 * Loads `module` (relative to `cwd`): its default export is a step array or a function returning one.
 * The file's mtime is part of the URL so a reload after an edit sees the new script instead of the module cache.
 */
export async function loadScriptModule(module: string, cwd = process.cwd()): Promise<ScriptStep[]> {
  const file = path.resolve(cwd, module)
  let exported: unknown
  try {
    const { mtimeMs } = await stat(file)
    exported = (await import(`${pathToFileURL(file).href}?mtime=${mtimeMs}`)).default
    if (typeof exported === 'function') exported = await exported()
  } catch (error) {
    throw new Error(`scripted: cannot load script module ${file}: ${describeError(error)}`)
  }
  if (!Array.isArray(exported)) {
    throw new TypeError(`scripted: the default export of ${file} must be an array of script steps or a function returning one`)
  }
  return checkSteps(exported, `scripted module ${file}`)
}

