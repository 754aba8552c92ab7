import { parse } from 'yaml'

/**
 * Environment interpolation for cordis.yml string values:
 * - `${VAR}` is replaced by the variable; an unset variable is an error (the entry fails, naming the field);
 * - `${VAR:-default}` uses `default` when VAR is unset or empty (shell semantics);
 * - `$${` is a literal `${`.
 * A string that is exactly one placeholder is read as a YAML scalar, so `${PORT}` can give a number and
 * `${FLAG:-false}` a boolean. Interpolation runs on parsed values, never on the file text, so a variable's
 * value can not change the structure of the file.
 */
const PLACEHOLDER = /\$(\$)?\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g
const EXACT = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}$/

export type Env = Record<string, string | undefined>

export class InterpolationError extends Error {
  constructor(readonly path: string, message: string) {
    super(message)
  }
}

function lookup(env: Env, name: string, fallback: string | undefined, path: string): string {
  const value = env[name]
  if (fallback !== undefined) return value === undefined || value === '' ? fallback : value
  if (value === undefined) {
    throw new InterpolationError(path, `environment variable ${name} is not set (write \${${name}:-} to make it optional)`)
  }
  return value
}

/** Reads an exact-placeholder value the way YAML would read it unquoted; anything but a scalar stays a string. */
function asScalar(text: string): unknown {
  if (text === '') return ''
  try {
    const value = parse(text)
    return value === null || typeof value !== 'object' ? value : text
  } catch {
    return text
  }
}

export function interpolateString(text: string, env: Env, path: string): unknown {
  const exact = EXACT.exec(text)
  if (exact) return asScalar(lookup(env, exact[1], exact[2], path))
  return text.replace(PLACEHOLDER, (_match, escaped: string | undefined, name: string, fallback: string | undefined) => {
    if (escaped) return _match.slice(1)
    return lookup(env, name, fallback, path)
  })
}

/** Returns a copy of `value` with every string interpolated; `path` names the field in error messages. */
export function interpolate(value: unknown, env: Env, path: string): unknown {
  if (typeof value === 'string') return interpolateString(value, env, path)
  if (Array.isArray(value)) return value.map((item, index) => interpolate(item, env, joinPath(path, index)))
  if (value && typeof value === 'object') {
    const result: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) result[key] = interpolate(item, env, joinPath(path, key))
    return result
  }
  return value
}

/** `config` + `maxSteps` -> `config.maxSteps`; keys that are not identifiers are quoted. */
export function joinPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`
  const part = /^[A-Za-z_$][\w$-]*$/.test(key) ? key : JSON.stringify(key)
  return path ? `${path}.${part}` : part
}
