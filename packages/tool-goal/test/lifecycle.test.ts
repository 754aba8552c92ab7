import { afterEach, expect, it } from 'vitest'
import { createHarness, type Harness } from '@goalkeeper/test-kit'

let h: Harness
afterEach(() => h?.dispose())

it('unloading removes the tools and the prompt section; loading again restores them', async () => {
  h = await createHarness({ workspaceTools: false })
  await h.load(await import('@goalkeeper/goal'), {})
  const plugin = await import('../src/index.ts')
  const fiber = await h.load(plugin, {})
  const names = () => h.root.tools.list().map((tool) => tool.name).filter((name) => name.includes('goal')).sort()
  expect(names()).toEqual(['create_goal', 'get_goal', 'update_goal'])
  await fiber.dispose()
  expect(names()).toEqual([])
  const agent = await h.createAgent()
  h.scripted.push({ text: 'a' }, { text: 'b' })
  agent.send({ content: 'without goal tools' })
  await agent.whenIdle()
  expect(h.scripted.requests[0].system ?? '').not.toContain('get_goal')
  await h.load(plugin, { blockedThreshold: 5 })
  expect(names()).toEqual(['create_goal', 'get_goal', 'update_goal'])
  agent.send({ content: 'with goal tools' })
  await agent.whenIdle()
  expect(h.scripted.requests[1].system).toMatch(/block is refused until 5 rounds have started/)
  expect(h.errors()).toEqual([])
})

it('an invalid blockedThreshold fails the plugin load', async () => {
  h = await createHarness({ workspaceTools: false })
  await h.load(await import('@goalkeeper/goal'), {})
  await expect(h.load(await import('../src/index.ts'), { blockedThreshold: -1 })).rejects.toThrow(/blockedThreshold/)
})
