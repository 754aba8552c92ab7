import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { nodeArgs } from '@goalkeeper/test-kit'
import { appsPerTest, databaseFor, LOG_VERSION, STORE, TEST_KEY, tempDir } from './helpers.ts'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '../../..')
const FLUSHED = 500

const launch = appsPerTest()

it('keeps every flushed record and nothing corrupt when the writer is killed with SIGKILL', async () => {
  const dir = await tempDir()
  const database = STORE === 'postgres' ? (await databaseFor(dir)).url : ''
  const args = [dir, String(FLUSHED), database, TEST_KEY, String(LOG_VERSION)]
  const child = spawn(process.execPath, [...nodeArgs(path.join(here, 'fixtures/kill-child.ts')), ...args], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = once(child, 'exit')
  let id: string | undefined
  let progress = 0
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.startsWith('flushed ')) id = line.slice('flushed '.length)
    // Kill while unflushed appends and background writes are in flight.
    if (line.startsWith('progress ') && ++progress === 5) {
      child.kill('SIGKILL')
      break
    }
  }
  const [, signal] = await exited
  expect(signal).toBe('SIGKILL')
  expect(id).toBeDefined()

  const app = await launch(dir)
  const session = await app.sessions.open(id!)
  const items = session.records.slice(1).filter((r) => r.type === 'test/item')
  expect(items.length).toBeGreaterThanOrEqual(FLUSHED)
  items.forEach((record, i) => {
    expect(record.seq).toBe(i + 1)
    expect((record.data as { i: number }).i).toBe(i)
  })
  // Nothing but the items: these records open no turn, so no repair record is due.
  expect(session.records).toHaveLength(items.length + 1)
  session.append('test/item', { i: items.length })
  await app.sessions.flush(session)
})
