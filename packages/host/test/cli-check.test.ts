import { describe, expect, it } from 'vitest'
import { run, useProject } from './cli-helpers.ts'

const project = useProject()

describe('check on a huge cordis.yml', { timeout: 120_000 }, () => {
  it('reports 20,000 disabled entries besides the real ones, one line each, and exits 0', async () => {
    const extra = Array.from({ length: 20_000 }, (_, i) => `- id: off${i}\n  name: '@goalkeeper/model'\n  disabled: true\n`).join('')
    const p = await project({ script: 'export default many(() => ({ text: "ok" }))', extraYml: extra })
    const started = performance.now()
    const checked = await run([...p.globals, 'check'])
    const seconds = (performance.now() - started) / 1000
    expect(checked.code, checked.stderr).toBe(0)
    const lines = checked.stdout.split('\n')
    expect(lines.filter((line) => /^ {2}disabled {2}off\d+ +@goalkeeper\/model$/.test(line))).toHaveLength(20_000)
    expect(checked.stdout).toMatch(/\n\d+ entries: \d+ loaded, 20000 disabled\n/)
    // A few seconds on an idle machine; the report used to overflow the stack at 200,000 entries.
    expect(seconds).toBeLessThan(90)
  })
})
