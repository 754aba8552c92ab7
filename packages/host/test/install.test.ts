// The installable CLI as a user gets it: built, packed with npm, installed into a fresh prefix, and run
// from directories that have no cordis.yml and no node_modules.
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { repoRoot } from '@goalkeeper/test-kit'

const exec = promisify(execFile)
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
let temp: string
let bin: string

/** Runs the installed goalkeeper with no API keys and no npm variables in its environment. */
async function goalkeeper(cwd: string, ...args: string[]) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_|_API_KEY$|^GOALKEEPER_/.test(name)))
  try {
    const { stdout, stderr } = await exec(bin, args, { cwd, env: { ...env, HOME: temp, XDG_STATE_HOME: path.join(temp, 'state'), XDG_CONFIG_HOME: path.join(temp, 'config') } })
    return { code: 0, stdout, stderr }
  } catch (error: any) {
    return { code: error.code as number, stdout: error.stdout as string, stderr: error.stderr as string }
  }
}

beforeAll(async () => {
  temp = await mkdtemp(path.join(os.tmpdir(), 'goalkeeper-install-'))
  await exec(process.execPath, [path.join(repoRoot, 'scripts/build.mjs')], { cwd: repoRoot })
  const { stdout } = await exec(npm, ['pack', '--json', '--pack-destination', temp, path.join(repoRoot, 'dist/goalkeeper')], { cwd: temp })
  const [{ filename }] = JSON.parse(stdout)
  const prefix = path.join(temp, 'prefix')
  // A tarball with no dependencies installs without the registry.
  await exec(npm, ['install', '-g', '--offline', '--no-audit', '--no-fund', '--prefix', prefix, path.join(temp, filename)], { cwd: temp })
  bin = path.join(prefix, 'bin', 'goalkeeper')
}, 180_000)

afterAll(async () => {
  if (temp) await rm(temp, { recursive: true, force: true })
})

describe('the packed CLI, installed with npm install -g', () => {
  it('installs a bundle that needs neither a TypeScript loader nor node_modules', async () => {
    const installed = path.join(temp, 'prefix', 'lib', 'node_modules', 'goalkeeper')
    const manifest = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8'))
    expect(manifest.dependencies).toBeUndefined()
    expect(await readdir(installed)).not.toContain('node_modules')
    const version = JSON.parse(await readFile(path.join(repoRoot, 'packages/host/package.json'), 'utf8')).version
    const result = await goalkeeper(temp, '--version')
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n` })
  })

  it('runs a prompt in a directory without a cordis.yml, on the default composition it carries', async () => {
    const empty = await mkdtemp(path.join(temp, 'empty-'))
    const result = await goalkeeper(empty, 'run', 'hello there')
    expect(result.code).toBe(0)
    expect(result.stderr).toContain('no cordis.yml here: the default composition')
    expect(result.stdout).toContain('offline demo model')
    const check = await goalkeeper(empty, '--json', 'check')
    expect(check.code).toBe(0)
    const report = JSON.parse(check.stdout.trim().split('\n')[0])
    expect(report.file).toBe(path.join(temp, 'prefix', 'lib', 'node_modules', 'goalkeeper', 'cordis.yml'))
  })

  it('pursues the demo goal to completion in a copy of the demo workspace', async () => {
    const workspace = path.join(temp, 'demo')
    await mkdir(workspace)
    await cp(path.join(repoRoot, 'demo', 'workspace'), workspace, { recursive: true })
    const result = await goalkeeper(workspace, 'goal', 'Create NOTES.md in the workspace with a summary of every file in it', '--max-rounds', '5')
    expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 0 })
    expect(result.stdout).toContain('Goal complete (not verified) after 3/5 rounds')
    expect(await readFile(path.join(workspace, 'NOTES.md'), 'utf8')).toContain('greet.js')
  })

  it('loads none of the agent stack for --help', async () => {
    const meta = JSON.parse(await readFile(path.join(repoRoot, 'dist/goalkeeper-meta.json'), 'utf8'))
    const outputs = meta.outputs as Record<string, { imports: { path: string; kind: string }[]; inputs: Record<string, unknown> }>
    const loaded = new Set<string>()
    const visit = (file: string) => {
      if (loaded.has(file)) return
      loaded.add(file)
      for (const item of outputs[file].imports) if (item.kind === 'import-statement' && outputs[item.path]) visit(item.path)
    }
    visit('dist/goalkeeper/goalkeeper.mjs')
    const sources = [...loaded].flatMap((file) => Object.keys(outputs[file].inputs))
    expect(sources.some((source) => source.startsWith('packages/host/src/'))).toBe(true)
    for (const heavy of ['packages/agent-loop/', 'packages/workspace-tools/', 'packages/model-openai/', 'packages/acp/', 'packages/tools/', '@agentclientprotocol', 'packages/fleet/', 'pg-boss', 'packages/board/']) {
      expect(sources.filter((source) => source.includes(heavy))).toEqual([])
    }
  })
})
