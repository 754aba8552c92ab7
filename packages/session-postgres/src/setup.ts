import type pg from 'pg'
import { delay } from '@goalkeeper/kit'

// Any constant: it only has to be the same for every goalkeeper process on the database. One lock for all
// of goalkeeper's set-up (the session schema, pg-boss's and the fleet's tables): DDL of two starters at
// once collides in PostgreSQL's catalogue (duplicate pg_type rows, deadlocks) even with IF NOT EXISTS.
export const SETUP_LOCK = 0x676b7367 // 'gksg'

/**
 * Runs `work` while holding goalkeeper's set-up lock on a connection of its own: any number of starters on a
 * fresh database queue here and each finds what the one before it created. A session-level lock, so it is
 * also let go when the connection dies.
 */
export async function underSetupLock<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect()
  let broken = false
  try {
    await client.query('SELECT pg_advisory_lock($1)', [SETUP_LOCK])
    try {
      return await work(client)
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [SETUP_LOCK]).catch((error) => {
        // A dead connection let go of the lock with it; it must not go back to the pool.
        broken = true
        if (!isConnectionLoss(error)) throw error
      })
    }
  } catch (error) {
    broken ||= isConnectionLoss(error)
    throw error
  } finally {
    client.release(broken)
  }
}

const LOST_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN'])
// SQLSTATE: admin_shutdown (pg_terminate_backend, a restart), crash_shutdown, cannot_connect_now (starting
// up or shutting down), deadlock and serialization failures (a retry of the whole transaction is the cure).
const LOST_STATES = new Set(['57P01', '57P02', '57P03', '40P01', '40001'])

/** Whether `error` is the database going away or a transaction a retry can redo, not a mistake in what was asked. */
export function isConnectionLoss(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown }
  if (typeof code === 'string' && (LOST_CODES.has(code) || LOST_STATES.has(code) || code.startsWith('08'))) return true
  const text = typeof message === 'string' ? message : ''
  return /\b(ECONNREFUSED|ECONNRESET|ETIMEDOUT)\b|Connection terminated|not queryable|Connection ended|timeout exceeded when trying to connect|the database system is (starting up|shutting down|in recovery)|terminating connection/i.test(text)
}

export interface RetryOptions {
  /** Tries in all, the first included (default 8). */
  attempts?: number
  /** Wait before the second try; doubled each time up to `maxDelayMs` (default 100). */
  firstDelayMs?: number
  maxDelayMs?: number
  /** Told before each wait: the error and the try that comes next (2 for the first retry). */
  onRetry?: (error: unknown, attempt: number) => void
  /** Which errors are worth another try (default: `isConnectionLoss`). */
  retryable?: (error: unknown) => boolean
}

/** Runs `work` again with a growing wait while it fails with a connection loss; any other error, or the last, is thrown. */
export async function withRetry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? 8
  const retryable = options.retryable ?? isConnectionLoss
  let wait = options.firstDelayMs ?? 100
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt)
    } catch (error) {
      if (attempt >= attempts || !retryable(error)) throw error
      options.onRetry?.(error, attempt + 1)
      // Jitter: starters that lost the same server do not all come back in the same millisecond.
      await delay(wait / 2 + Math.random() * wait / 2)
      wait = Math.min(wait * 2, options.maxDelayMs ?? 2000)
    }
  }
}

/**
 * Gives every connection of `pool` an error listener for its whole life. The pool listens only to idle
 * connections; one checked out (a transaction, the set-up lock) that the server drops emits 'error', which
 * with no listener ends the process. The query it was running rejects with the same error, so that is
 * where it is handled.
 */
export function guardConnections(pool: pg.Pool, onError: (error: Error) => void = () => {}): pg.Pool {
  pool.on('error', onError)
  pool.on('connect', (client) => void client.on('error', () => {}))
  return pool
}
