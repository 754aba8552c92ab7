// The installable CLI as a user gets it: the README's install commands, run as written from the
// repository root (npm's global prefix pointed at a fresh directory), then the installed CLI run from
// directories that have no cordis.yml and no node_modules.
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { repoRoot } from '@goalkeeper/test-kit'

const exec = promisify(execFile)
let temp: string
let prefix: string
let bin: string
/** The README's install block: the install line, then the line that uses it. */
let documented: string[]

/** The environment of a person's shell: none of the runner's npm or goalkeeper variables, no API key, this home and prefix. */
function userEnv(): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_|_API_KEY$|^GOALKEEPER_/i.test(name)))
  return {
    ...env,
    HOME: temp,
    XDG_STATE_HOME: path.join(temp, 'state'),
    XDG_CONFIG_HOME: path.join(temp, 'config'),
    PATH: `${path.join(prefix, 'bin')}${path.delimiter}${env.PATH}`,
    // Where `npm install -g` installs, and no registry: a tarball without dependencies needs none.
    npm_config_prefix: prefix,
    npm_config_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
  }
}

/** Runs the installed goalkeeper with no API keys and no npm variables in its environment. */
async function goalkeeper(cwd: string, ...args: string[]) {
  return shell(cwd, bin, args)
}

async function shell(cwd: string, file: string, args: string[]) {
  try {
    const { stdout, stderr } = await exec(file, args, { cwd, env: userEnv() })
    return { code: 0, stdout, stderr }
  } catch (error: any) {
    return { code: error.code as number, stdout: error.stdout as string, stderr: error.stderr as string }
  }
}

/** The lines of the sh block under the README's "Installing the CLI". */
async function readmeInstallBlock(): Promise<string[]> {
  const readme = await readFile(path.join(repoRoot, 'README.md'), 'utf8')
  const section = readme.slice(readme.indexOf('## Installing the CLI'))
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1]
  if (!block) throw new Error('README.md: no sh block under "## Installing the CLI"')
  return block.split('\n').filter((line) => line.trim())
}

beforeAll(async () => {
  temp = await mkdtemp(path.join(os.tmpdir(), 'goalkeeper-install-'))
  prefix = path.join(temp, 'prefix')
  documented = await readmeInstallBlock()
  const install = await shell(repoRoot, 'sh', ['-c', documented[0]])
  if (install.code !== 0) throw new Error(`the README's install line failed (${install.code}): ${documented[0]}\n${install.stderr}`)
  bin = path.join(prefix, 'bin', 'goalkeeper')
}, 180_000)

afterAll(async () => {
  if (temp) await rm(temp, { recursive: true, force: true })
})

describe("the README's install commands, run as written", () => {
  it('use relative paths and the version being built, and leave the tarball where git ignores it', async () => {
    const version = JSON.parse(await readFile(path.join(repoRoot, 'packages/host/package.json'), 'utf8')).version
    expect(documented[0]).toBe(`npm run build && npm pack ./dist/goalkeeper --pack-destination dist && npm install -g ./dist/goalkeeper-${version}.tgz`)
    const tarball = path.join(repoRoot, 'dist', `goalkeeper-${version}.tgz`)
    expect((await stat(tarball)).isFile()).toBe(true)
    const ignored = await exec('git', ['check-ignore', '-q', tarball], { cwd: repoRoot }).then(() => true, () => false)
    expect(ignored).toBe(true)
    // Nothing of the install is left where `git status` shows it.
    const { stdout } = await exec('git', ['status', '--porcelain', '--untracked-files=all', '--', '*.tgz', 'dist'], { cwd: repoRoot })
    expect(stdout).toBe('')
  })

  it('the next line runs the installed goalkeeper in a project of its own: offline, the goal blocks and says how to use a real model', async () => {
    // `cd ~/src/app && goalkeeper goal "Make the tests pass"   # ...`
    await mkdir(path.join(temp, 'src', 'app'), { recursive: true })
    expect(documented[1]).toMatch(/^cd ~\/src\/app && goalkeeper goal "Make the tests pass"\s+#/)
    const result = await shell(temp, 'sh', ['-c', documented[1]])
    expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 2 })
    expect(result.stderr + result.stdout).toMatch(/DEEPSEEK_API_KEY/)
  })

  it('the installed package carries the READMEs its help and messages point to', async () => {
    const installed = path.join(prefix, 'lib', 'node_modules', 'goalkeeper')
    const help = await goalkeeper(temp, 'acp', '--help')
    expect(help.code).toBe(0)
    const pointed = /\n(\/\S+\/README\.md)\n/.exec(help.stdout)?.[1]
    expect(pointed).toBe(path.join(installed, 'packages/acp/README.md'))
    expect(await readFile(pointed!, 'utf8')).toContain('agent_servers')
    const empty = await mkdtemp(path.join(temp, 'no-hooks-'))
    const hooks = await goalkeeper(empty, 'hooks')
    expect(hooks.stdout).toContain(`see ${path.join(installed, 'packages/hooks/README.md')})`)
    await stat(path.join(installed, 'packages/hooks/README.md'))
    // The package's own README names the guides it carries.
    const readme = await readFile(path.join(installed, 'README.md'), 'utf8')
    for (const file of ['docs/plugins.md', 'docs/DESIGN.md', 'packages/permissions/README.md']) {
      expect(readme).toContain(file)
      await stat(path.join(installed, file))
    }
    expect(readme).not.toMatch(/npm install -g goalkeeper\b(?!-)/)
  })
})

describe('the packed CLI, installed with npm install -g', () => {
  it('installs a bundle that needs neither a TypeScript loader nor node_modules', async () => {
    const installed = path.join(prefix, 'lib', 'node_modules', 'goalkeeper')
    const manifest = JSON.parse(await readFile(path.join(installed, 'package.json'), 'utf8'))
    expect(manifest.dependencies).toBeUndefined()
    expect(await readdir(installed)).not.toContain('node_modules')
    const schema = JSON.parse(await readFile(path.join(installed, 'schema', 'json-output.schema.json'), 'utf8'))
    expect(schema.title).toBe('goalkeeper --json output line')
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
    expect(report.file).toBe(path.join(prefix, 'lib', 'node_modules', 'goalkeeper', 'cordis.yml'))
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
