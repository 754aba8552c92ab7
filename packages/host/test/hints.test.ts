// The exact commands that hints suggest, as a function of the global options (no CLI is spawned).
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { cliCommand } from '../src/commands/render/hints.ts'

// Hints are relative to the directory goalkeeper was started in, captured when the module loads.
const launch = process.cwd()
const globals = (cwd: string, config = path.join(cwd, 'cordis.yml')) => ({ cwd, config })

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('cliCommand', () => {
  it('repeats no global option when the command ran where it was started, on its cordis.yml', () => {
    vi.stubEnv('npm_package_name', '')
    expect(cliCommand(globals(launch), 'goal', '--session', '20261129-2114-k3v9qa')).toBe('goalkeeper goal --session 20261129-2114-k3v9qa')
  })

  it('starts with npx goalkeeper when npm started it inside the goalkeeper repository', () => {
    vi.stubEnv('npm_package_name', 'goalkeeper')
    expect(cliCommand(globals(launch), 'sessions')).toBe('npx goalkeeper sessions')
  })

  it('gives --cwd and --config relative when they lie below, absolute when they do not', () => {
    vi.stubEnv('npm_package_name', '')
    const below = path.join(launch, 'demo', 'workspace')
    expect(cliCommand(globals(below), 'show', 'ID')).toBe('goalkeeper --cwd demo/workspace show ID')
    expect(cliCommand(globals(below, path.join(below, 'conf', 'my.yml')), 'check')).toBe('goalkeeper --cwd demo/workspace --config conf/my.yml check')
    const outside = path.resolve(launch, '..', 'elsewhere')
    expect(cliCommand(globals(outside, path.join(launch, 'cordis.yml')), 'check'))
      .toBe(`goalkeeper --cwd ${outside} --config ${path.join(launch, 'cordis.yml')} check`)
  })

  it('quotes words the shell would split or expand', () => {
    vi.stubEnv('npm_package_name', '')
    expect(cliCommand(globals(launch), 'goal', "it's done", 'a b', '$HOME', 'plain-word_1.2'))
      .toBe(`goalkeeper goal 'it'\\''s done' 'a b' '$HOME' plain-word_1.2`)
  })
})
