import { randomBytes, timingSafeEqual } from 'node:crypto'

/** A fresh token for one run of the board (URL-safe, 192 bits). */
export const newToken = () => randomBytes(24).toString('base64url')

/** The shortest token a person may choose (`--token`), for a board reachable beyond this machine. */
export const MIN_TOKEN_CHARS = 16

/** Compares in constant time, so the answer's timing tells nothing of the token. */
export function tokenMatches(given: string | undefined, token: string): boolean {
  if (!given) return false
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Whether `host` (as --host takes it) is this machine only. */
export const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
