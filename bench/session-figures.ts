// What the session benches share: the record they write, their timing and their append figure.
import os from 'node:os'
import path from 'node:path'
import { Context } from 'cordis'
import { sessionStack } from '@goalkeeper/test-kit'

/** A typical mid-sized record: a tool result of a few hundred bytes. */
export const payload = (i: number) => ({ turn: 1 + (i >> 6), step: 1 + (i & 63), callId: `call-${i}`, ok: true, content: `line ${i}\n`.repeat(20) })

/**
 * Runs `task` with the session service on `<dir>/sessions` (key `<dir>/session.key`), sessions of up to `maxBytes`
 * allowed to open and grow; stops it after.
 */
export async function withSessions<T>(dir: string, maxBytes: number, task: (ctx: Context) => Promise<T>): Promise<T> {
  const ctx = new Context()
  const fiber = await ctx.plugin(sessionStack, { dir: path.join(dir, 'sessions'), keyFile: path.join(dir, 'session.key'), maxOpenBytes: maxBytes, maxSessionBytes: maxBytes })
  try {
    return await task(ctx)
  } finally {
    await fiber.dispose()
  }
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
export const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9

/** Records/s through ctx.sessions: `append` each record, `await flush` every `batch` records. */
export async function sessionAppend(root: Context, count: number, batch: number): Promise<number> {
  const session = await root.sessions.create({ cwd: os.tmpdir() })
  const start = process.hrtime.bigint()
  for (let i = 0; i < count; i++) {
    session.append('tool/result', payload(i))
    if ((i + 1) % batch === 0) await root.sessions.flush(session)
  }
  const elapsed = seconds(start)
  await root.sessions.close(session)
  return count / elapsed
}
