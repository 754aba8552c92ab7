// The per-call seam as a third party uses it: the example plugin of packages/tools/README.md
// (examples/command-guard.mjs), loaded from a cordis.yml by the real loader next to the real workspace
// tools and agent loop, reviewing a model's run_command calls. Only the model is scripted.
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { ScriptedProvider } from '@goalkeeper/model'
import type { SessionRecord } from '@goalkeeper/session'
import { composeFromYml, coreEntries, type Composition } from './compose.ts'

const EXAMPLE = path.resolve('examples/command-guard.mjs')

let app: Composition | undefined
afterEach(async () => {
  await app?.dispose()
  app = undefined
})

const results = (records: readonly SessionRecord[]) => records.filter((r) => r.type === 'tool/result').map((r) => r.data as Record<string, any>)

describe('examples/command-guard.mjs', () => {
  it('denies rm -rf with a reason, caps a timeout, lets the rest run, and the session records each decision', async () => {
    app = await composeFromYml((paths) => `${coreEntries(paths)}- id: command-guard
  name: ./command-guard.mjs
  config: { maxTimeoutMs: 5000 }
`, { 'command-guard.mjs': await fs.readFile(EXAMPLE, 'utf8') })
    const scripted = app.root.models.get('scripted') as ScriptedProvider
    const command = (cmd: string, extra: Record<string, unknown> = {}) => ({ name: 'run_command', arguments: { command: cmd, ...extra } })
    scripted.push(
      { toolCalls: [command('rm -rf build'), command('rm -r -f build')] },
      { toolCalls: [command('echo slow', { timeout_ms: 900_000 })] },
      { toolCalls: [command('echo fine')] },
      { text: 'done' },
    )
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    await fs.mkdir(path.join(app.workspace, 'build'))
    agent.send({ content: 'clean up' })
    await agent.whenIdle()
    const records = await app.readLog(agent)
    const [rmrf, rmrf2, slow, fine] = results(records)

    expect(rmrf).toMatchObject({ ok: false, error: { code: 'DENIED' }, denied: { by: 'command-guard' } })
    expect(rmrf.denied.reason).toMatch(/^recursive forced deletes are not allowed here/)
    expect(rmrf.content).toBe(`The call was denied by command-guard: ${rmrf.denied.reason}`)
    expect(rmrf2).toMatchObject({ ok: false, denied: { by: 'command-guard' } })
    // Nothing ran: the directory is still there.
    await expect(fs.stat(path.join(app.workspace, 'build'))).resolves.toBeTruthy()
    // The model read the reason as the calls' results, and the turn went on.
    expect(scripted.requests[1].messages.filter((m) => m.role === 'tool').map((m) => (m as { content: string }).content))
      .toEqual([rmrf.content, rmrf2.content])

    expect(slow).toMatchObject({ ok: true, rewrites: [{ by: 'command-guard', reason: 'timeout_ms is capped at 5000', arguments: '{"command":"echo slow","timeout_ms":5000}' }] })
    expect(records.find((r) => r.type === 'tool/call' && (r.data as any).callId === slow.callId)?.data).toMatchObject({ arguments: '{"command":"echo slow","timeout_ms":900000}' })
    expect(fine).toMatchObject({ ok: true })
    expect(fine.content).toContain('fine')
    expect(fine.denied).toBeUndefined()
    expect(fine.rewrites).toBeUndefined()
    expect(records.at(-1)?.data).toMatchObject({ outcome: { kind: 'completed' } })
    expect(app.errors).toEqual([])
  })

  it('is shown whole in the tools README', async () => {
    const readme = await fs.readFile('packages/tools/README.md', 'utf8')
    expect(readme).toContain((await fs.readFile(EXAMPLE, 'utf8')).trim())
  })
})
