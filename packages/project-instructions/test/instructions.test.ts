import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import * as plugin from '../src/index.ts'

let h: Harness
let savedXdg: string | undefined
beforeEach(async () => {
  h = await createHarness({ workspaceTools: false })
  savedXdg = process.env.XDG_CONFIG_HOME
  process.env.XDG_CONFIG_HOME = path.join(h.dir, 'xdg')
})
afterEach(async () => {
  if (savedXdg === undefined) delete process.env.XDG_CONFIG_HOME
  else process.env.XDG_CONFIG_HOME = savedXdg
  await h.dispose()
})

const write = async (file: string, text: string) => {
  await fs.mkdir(path.dirname(file), { recursive: true })
  await fs.writeFile(file, text)
}

/** `outside/AGENTS.md` above a repository `repo/` (with `.git`) holding `repo/AGENTS.md`, `repo/pkg/AGENTS.md` and the workspace `repo/pkg/app`. */
async function layout() {
  const repo = path.join(h.dir, 'outside', 'repo')
  const workspace = path.join(repo, 'pkg', 'app')
  await fs.mkdir(path.join(repo, '.git'), { recursive: true })
  await fs.mkdir(workspace, { recursive: true })
  await write(path.join(h.dir, 'outside', 'AGENTS.md'), 'OUTSIDE: never read')
  await write(path.join(repo, 'AGENTS.md'), 'ROOT: use pnpm')
  await write(path.join(repo, 'pkg', 'AGENTS.md'), 'PKG: tests live in test/')
  await write(path.join(workspace, 'AGENTS.md'), 'APP: run npm test before you finish')
  await write(path.join(h.dir, 'xdg', 'goalkeeper', 'AGENTS.md'), 'USER: answer in British English')
  return { repo, workspace }
}

async function systemPrompt(workspace: string): Promise<string> {
  const agent = await h.createAgent({ cwd: workspace })
  h.scripted.push({ text: 'ok' })
  agent.send({ content: 'hi' })
  await agent.whenIdle()
  await agent.dispose()
  return h.scripted.requests.at(-1)!.system!
}

describe('project instructions', () => {
  it('adds the user file, then the repository root down to the workspace, the nearest last, and nothing above the repository', async () => {
    const { workspace } = await layout()
    await h.load(plugin, {})
    const system = await systemPrompt(workspace)
    const order = ['USER:', 'ROOT:', 'PKG:', 'APP:'].map((marker) => system.indexOf(marker))
    expect(order.every((at) => at > 0)).toBe(true)
    expect(order).toEqual([...order].sort((a, b) => a - b))
    expect(system).not.toContain('OUTSIDE')
    expect(system).toContain(`## ${path.join('..', '..', 'AGENTS.md')} (repository)`)
    expect(system).toContain('## AGENTS.md (workspace root)')
    expect(system).toContain(plugin.HEADING)
    expect(h.root.projectInstructions.files(workspace).map((file) => file.scope)).toEqual(['user', 'repository', 'repository', 'workspace'])
  })

  it('outside a repository only the workspace file applies, and an edited file is read again', async () => {
    const workspace = path.join(h.dir, 'plain')
    await write(path.join(h.dir, 'AGENTS.md'), 'PARENT: never read')
    await write(path.join(workspace, 'AGENTS.md'), 'FIRST')
    await h.load(plugin, { user: false })
    expect(await systemPrompt(workspace)).toContain('FIRST')
    await write(path.join(workspace, 'AGENTS.md'), 'SECOND, a longer text')
    const system = await systemPrompt(workspace)
    expect(system).toContain('SECOND')
    expect(system).not.toContain('PARENT')
  })

  it('cuts the farthest files first at the cap and says so', async () => {
    const { workspace } = await layout()
    await h.load(plugin, { maxChars: 60, user: false })
    const system = await systemPrompt(workspace)
    expect(system).toContain('APP: run npm test before you finish')
    expect(system).toContain('PKG: tests live')
    expect(system).not.toContain('ROOT')
    // APP (35 characters) and PKG (24) fit; one character is left for ROOT (14).
    expect(system).toContain(`## ${path.join('..', '..', 'AGENTS.md')} (repository)\n\nR\n\n`)
    expect(system.endsWith(`[Project instructions were cut to 60 characters: ${path.join('..', '..', 'AGENTS.md')} (repository) (cut after 1 of 14 characters). Read the files for the rest.]`)).toBe(true)
  })

  it('adds nothing when disabled in the config or switched off for the run', async () => {
    const { workspace } = await layout()
    const fiber = await h.load(plugin, { enabled: false })
    expect(await systemPrompt(workspace)).not.toContain('APP:')
    await fiber.dispose()
    await h.load(plugin, {})
    expect(await systemPrompt(workspace)).toContain('APP:')
    h.root.projectInstructions.enabled = false
    expect(await systemPrompt(workspace)).not.toContain('APP:')
  })
})
