// An MCP server entry in a cordis.yml, loaded by the real loader next to the permissions plugin: its tools
// run when a rule allows them or their annotations say they only read, with a ${VAR} value from the
// environment. Only the model is scripted.
import { createRequire } from 'node:module'
import { afterEach, describe, expect, it } from 'vitest'
import type { ScriptedProvider } from '@goalkeeper/model'
import { composeFromYml, coreEntries, type Composition } from './compose.ts'

const EVERYTHING = createRequire(import.meta.resolve('@goalkeeper/mcp')).resolve('@modelcontextprotocol/server-everything/dist/index.js')

let app: Composition | undefined
afterEach(async () => {
  await app?.dispose()
  app = undefined
})

describe('an mcp entry in cordis.yml', () => {
  it('offers the server\'s tools through the permission rules and the kinds its annotations give', { timeout: 60_000 }, async () => {
    app = await composeFromYml((paths) => `${coreEntries(paths)}- id: permissions
  name: '@goalkeeper/permissions'
  config:
    rules:
      - { tool: 'everything__toggle-simulated-logging', action: allow }
- id: everything
  name: '@goalkeeper/mcp'
  config:
    name: everything
    command: ${JSON.stringify(process.execPath)}
    args: [${JSON.stringify(EVERYTHING)}, stdio]
    timeoutMs: \${MCP_TIMEOUT_MS:-60000}
`)
    const scripted = app.root.models.get('scripted') as ScriptedProvider
    scripted.push({
      toolCalls: [
        { name: 'everything__toggle-simulated-logging', arguments: {} },
        { name: 'everything__echo', arguments: { message: 'from yml' } },
        { name: 'everything__toggle-subscriber-updates', arguments: {} },
      ],
    }, { text: 'done' })
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    agent.send({ content: 'echo' })
    await agent.whenIdle()
    const results = (await app.readLog(agent)).filter((r) => r.type === 'tool/result').map((r) => r.data as Record<string, any>)
    // Allowed by the rule.
    expect(results[0]).toMatchObject({ ok: true })
    expect(results[0].denied).toBeUndefined()
    // Annotated readOnlyHint: a read, which the workspace-write mode allows.
    expect(results[1]).toMatchObject({ ok: true, content: 'Echo: from yml' })
    // Neither: the workspace-write mode asks, and nobody is there.
    expect(results[2]).toMatchObject({ ok: false, denied: { by: 'permissions' } })
    expect(app.errors).toEqual([])
  })
})
