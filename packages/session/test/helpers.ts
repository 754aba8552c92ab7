import { afterEach, expect, onTestFinished } from 'vitest'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Context, type Fiber, Logger } from 'cordis'
import type { SessionService } from '@goalkeeper/session'
import * as plugin from '../src/index.ts'

/** The signing key of these tests and their child processes, never the user's own. */
export const TEST_KEY = path.join(os.tmpdir(), 'goalkeeper-tests', 'session.key')

export interface Logged { type: string; name: string; text: string }

export interface Started {
  root: Context
  fiber: Fiber
  sessions: SessionService
  logs: Logged[]
  /** Resolves with the first captured log line (past or future) that matches. */
  waitLog(match: (log: Logged) => boolean): Promise<Logged>
}

const exporter = { colors: false as const, export: () => {} }

/** A fresh app with the session plugin on `dir`, logs captured (debug and up). */
export async function start(dir: string, config: Partial<plugin.Config> = {}): Promise<Started> {
  const root = new Context()
  const logs: Logged[] = []
  const waiting = new Set<(log: Logged) => void>()
  root.logger.exporter({
    levels: { default: 3 },
    export: (m) => {
      const log = { type: m.type, name: m.name, text: Logger.format(exporter, m) }
      logs.push(log)
      for (const notify of waiting) notify(log)
    },
  })
  const waitLog = (match: (log: Logged) => boolean) => {
    const found = logs.find(match)
    if (found) return Promise.resolve(found)
    return new Promise<Logged>((resolve) => {
      const notify = (log: Logged) => {
        if (!match(log)) return
        waiting.delete(notify)
        resolve(log)
      }
      waiting.add(notify)
    })
  }
  const fiber = await root.plugin(plugin, { dir, keyFile: TEST_KEY, ...config })
  return { root, fiber, sessions: root.sessions, logs, waitLog }
}

/** A `start` for one test file whose apps are disposed after each test. */
export function appsPerTest(): (dir: string, config?: Partial<plugin.Config>) => Promise<Started> {
  let apps: Started[] = []
  afterEach(async () => {
    for (const app of apps.reverse()) await app.fiber.dispose()
    apps = []
  })
  return async (dir, config) => {
    const app = await start(dir, config)
    apps.push(app)
    return app
  }
}

/** A fresh directory, removed when the test has finished (after its apps are disposed). */
export async function tempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-'))
  onTestFinished(() => fs.rm(dir, { recursive: true, force: true }))
  return dir
}

export async function readLines(file: string): Promise<any[]> {
  const text = await fs.readFile(file, 'utf8')
  expect(text.endsWith('\n')).toBe(true)
  // Records as the service holds them: the mac is the file's business (integrity.test.ts checks it).
  return text.slice(0, -1).split('\n').map((line) => {
    const { mac, ...record } = JSON.parse(line)
    return record
  })
}

/** Writes a session file by hand, one JSON value per line, for crash and corruption scenarios. */
export async function writeSession(dir: string, id: string, records: { type: string; data: unknown }[], tail = ''): Promise<string> {
  const file = path.join(dir, `${id}.jsonl`)
  const header = { type: 'session/header', data: { version: 1, id, createdAt: 1000, cwd: '/work' } }
  const lines = [header, ...records].map((r, seq) => JSON.stringify({ seq, at: 1000 + seq, type: r.type, data: r.data }))
  await fs.writeFile(file, lines.map((l) => `${l}\n`).join('') + tail)
  return file
}

export function human(id: string, text: string) {
  return { id, content: [{ type: 'text', text }], source: { kind: 'human' } }
}
