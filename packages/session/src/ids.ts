import { randomBytes } from 'node:crypto'

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'

/**
 * `yyyymmdd-hhmmss-xxxxxx`: UTC time to the second, then 6 random base-32 characters (30 bits).
 * Ids sort by creation time; uniqueness within a second is random, and creation itself is exclusive,
 * so a collision retries instead of overwriting.
 */
export function newSessionId(now: number): string {
  const time = new Date(now).toISOString()
  const stamp = `${time.slice(0, 4)}${time.slice(5, 7)}${time.slice(8, 10)}-${time.slice(11, 13)}${time.slice(14, 16)}${time.slice(17, 19)}`
  let suffix = ''
  for (const byte of randomBytes(6)) suffix += ALPHABET[byte & 31]
  return `${stamp}-${suffix}`
}

const VALID_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

export function isSessionId(id: unknown): id is string {
  return typeof id === 'string' && VALID_ID.test(id) && !id.includes('..')
}

/** Ids name files, so they must not be able to climb out of the sessions directory or hide as dotfiles. */
export function assertSessionId(id: unknown): asserts id is string {
  if (!isSessionId(id)) {
    throw new TypeError(`invalid session id ${JSON.stringify(String(id)).slice(0, 80)}: use letters, digits, '.', '_' and '-' (at most 128, not starting with a symbol)`)
  }
}
