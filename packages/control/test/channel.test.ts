import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type ControlRequest, parseRequest, pointerFile, sendControl, socketFile } from '../src/index.ts'
import { startControlServer } from '../src/server.ts'

let dir = ''
beforeEach(async () => {
  dir = path.join(await mkdtemp(path.join(os.tmpdir(), 'gk-control-')), 'c')
})
afterEach(async () => {
  await rm(path.dirname(dir), { recursive: true, force: true })
})

const pause: ControlRequest = { session: 's1', source: 'cli', action: 'pause' }

describe('the control channel', () => {
  it('names what is wrong with a request', () => {
    const refused = (value: unknown) => {
      try {
        parseRequest(value)
      } catch (error) {
        return (error as Error).message
      }
      return 'accepted'
    }
    expect(refused([])).toBe('a control request is a JSON object')
    expect(refused({ source: 'board', action: 'pause' })).toBe('session: the id of a session is required')
    expect(refused({ session: 's', source: 'model', action: 'pause' })).toBe('source must be one of board, cli')
    expect(refused({ session: 's', source: 'board', action: 'raise' })).toBe('raise needs budgets, maxRounds or both')
    expect(refused({ session: 's', source: 'board', action: 'raise', budgets: { tokens: 1.5 } })).toBe('budget tokens must be a positive integer, not 1.5')
    expect(refused({ session: 's', source: 'board', action: 'raise', budgets: { cash: 3 } })).toBe('unknown budget "cash": use tokens, costUsd or activeTimeMs')
    expect(refused({ session: 's', source: 'board', action: 'answer', callId: 'c' })).toBe('answer needs callId (a string) and allow (true or false)')
    expect(parseRequest({ session: 's', source: 'board', action: 'raise', revision: 3, budgets: { costUsd: 0.5 }, maxRounds: 9, extra: 1 })).toEqual({ session: 's', source: 'board', action: 'raise', revision: 3, budgets: { costUsd: 0.5 }, maxRounds: 9 })
  })

  it('serves one reply line per request line on a socket only this user can use, and names the sessions it holds', async () => {
    const seen: ControlRequest[] = []
    const server = await startControlServer(dir, (request) => {
      seen.push(request)
      if (request.action === 'pause') throw Object.assign(new Error('The goal is paused already.'), { code: 'GOAL_INVALID_TRANSITION' })
      return { pid: process.pid, goal: null, answersApprovals: false, approvals: [] }
    })
    try {
      expect((await stat(dir)).mode & 0o777).toBe(0o700)
      expect((await stat(server.socket)).mode & 0o777).toBe(0o600)
      await server.hold('s1')
      expect(await sendControl({ session: 's1', source: 'board', action: 'status' }, { dir })).toEqual({ ok: true, status: { pid: process.pid, goal: null, answersApprovals: false, approvals: [] } })
      expect(await sendControl(pause, { dir })).toEqual({ ok: false, code: 'GOAL_INVALID_TRANSITION', message: 'The goal is paused already.' })
      expect(seen.map((request) => request.action)).toEqual(['status', 'pause'])
      await server.release('s1')
      await expect(sendControl(pause, { dir })).rejects.toThrow('no goalkeeper process on this machine has session s1 open')
    } finally {
      await server.close()
    }
  })

  it('says a process is gone when the session names one that no longer listens', async () => {
    const server = await startControlServer(dir, () => ({ pid: process.pid, goal: null, answersApprovals: false, approvals: [] }))
    await server.close()
    // A note left behind by a process killed before it could remove it.
    await writeFile(pointerFile(dir, 's1'), JSON.stringify({ pid: 2 ** 22 + 1, socket: socketFile(dir, 2 ** 22 + 1) }))
    await expect(sendControl(pause, { dir })).rejects.toMatchObject({ code: 'CONTROL_GONE', message: `the process that ran session s1 (pid ${2 ** 22 + 1}) is gone` })
  })
})
