import { type ChildProcess, spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { nodeArgs } from '@goalkeeper/test-kit'
import { useFixtures, writeYml } from '@goalkeeper/test-kit'
import { CLI_TIMEOUT, jsonLines } from '@goalkeeper/test-kit'

const hostDir = path.resolve(fileURLToPath(import.meta.url), '../..')
const repoRoot = path.resolve(hostDir, '../..')
const cli = path.join(hostDir, 'src/cli.ts')

const fixtures = useFixtures()
const children: ChildProcess[] = []

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

interface Run {
  child: ChildProcess
  stdout: () => string
  stderr: () => string
  exit: Promise<number | null>
  /** Resolves when stderr has matched `pattern`. */
  stderrMatches: (pattern: RegExp) => Promise<void>
}

function start(args: string[], options: { bin?: boolean; cwd?: string; env?: Record<string, string> } = {}): Run {
  // The run's bundle of the CLI, or from source `node --import tsx`, which resolves tsx from the cwd, so that
  // form runs in the repository; the bin finds tsx itself.
  const argv = options.bin ? [path.join(hostDir, 'bin/goalkeeper.mjs'), ...args] : [...nodeArgs(cli), ...args]
  const child = spawn(process.execPath, argv, {
    cwd: options.cwd ?? repoRoot,
    env: { ...withoutNpm(process.env), NO_COLOR: '1', XDG_CONFIG_HOME: path.join(os.tmpdir(), `gk-no-user-config-${process.pid}`), ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  children.push(child)
  let out = ''
  let err = ''
  const waiters: { pattern: RegExp; resolve: () => void; reject: (error: Error) => void }[] = []
  child.stdout!.on('data', (chunk) => (out += chunk))
  child.stderr!.on('data', (chunk) => {
    err += chunk
    for (const waiter of waiters.filter((item) => item.pattern.test(err))) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve()
    }
  })
  const exit = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      // A child that dies before printing what a test waits for fails that test at once, with its output.
      for (const waiter of waiters.splice(0)) waiter.reject(new Error(`exited with ${code} before ${waiter.pattern}:\n${err}`))
      resolve(code)
    }),
  )
  const stderrMatches = (pattern: RegExp) =>
    pattern.test(err) ? Promise.resolve() : new Promise<void>((resolve, reject) => waiters.push({ pattern, resolve, reject }))
  return { child, stdout: () => out, stderr: () => err, exit, stderrMatches }
}

/** The runner may be `npm test`: npm's variables would change the CLI's hints to `npx goalkeeper`. */
function withoutNpm(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('npm_')))
}

async function run(args: string[], options?: Parameters<typeof start>[1]) {
  const handle = start(args, options)
  const code = await handle.exit
  return { code, stdout: handle.stdout(), stderr: handle.stderr() }
}

const good = '- id: first\n  name: ./noisy.mjs\n  config: { label: first }\n- id: second\n  name: ./noisy.mjs\n  config: { label: second }\n'

// Each case starts node and the CLI; on a busy machine that alone can take seconds.
describe('goalkeeper CLI', { timeout: CLI_TIMEOUT }, () => {
  it('--help lists the global options and the commands on stdout', async () => {
    const { code, stdout, stderr } = await run(['--help'])
    expect(code).toBe(0)
    expect(stdout).toMatch(/^Usage: goalkeeper \[global options\] <command>/)
    for (const flag of ['--config', '--cwd', '--log-level', '--verbose', '--watch', '--json', '--version']) expect(stdout).toContain(flag)
    expect(stdout).toMatch(/\n {2}check\s/)
    expect(stderr).toBe('')
  })

  it('--version prints the package version, also through the bin from any directory', async () => {
    const { version } = JSON.parse(await readFile(path.join(hostDir, 'package.json'), 'utf8'))
    const { code, stdout, stderr } = await run(['--version'], { bin: true, cwd: fixtures.dir })
    expect(code, stderr).toBe(0)
    expect(stdout).toBe(`${version}\n`)
  })

  it('check on a good composition: the report on stdout, nothing on stderr, exit 0', async () => {
    const { file } = await writeYml(fixtures.dir, good)
    const { code, stdout, stderr } = await run(['--config', file, 'check'])
    expect(stderr).toBe('')
    expect(code, stderr).toBe(0)
    expect(stdout).toContain(`composition ${file}`)
    expect(stdout).toMatch(/loaded\s+first\s+\.\/noisy\.mjs/)
    expect(stdout).toContain('2 entries: 2 loaded\n')
  })

  it('check on a bad composition: failures on stdout and stderr, no stack trace, exit 64', async () => {
    const secret = 'sk-test-0123456789'
    await writeYml(fixtures.dir, `${good}- id: bad\n  name: ./counter.mjs\n  config: { maxSteps: x }\n- id: boom\n  name: ./throws.mjs\n`
      + `- id: leaky\n  name: ./counter.mjs\n  config:\n    maxSteps: \${GK_TEST_API_KEY}\n`)
    const { code, stdout, stderr } = await run(['--cwd', fixtures.dir, 'check'], { env: { GK_TEST_API_KEY: secret } })
    expect(code, stderr).toBe(64)
    expect(stdout).toContain('entry "bad": config.maxSteps: expected a number, got "x"')
    expect(stdout).toContain('5 entries: 2 loaded, 3 failed')
    expect(stdout).toContain('entry "leaky": config.maxSteps: expected a number, got "[redacted GK_TEST_API_KEY]"')
    expect(stdout + stderr).not.toContain(secret)
    expect(stderr).toContain('[E] loader entry "bad": config.maxSteps: expected a number, got "x"\n')
    expect(stderr).toContain('[E] throws Error: boom in apply\n')
    expect(stderr).not.toMatch(/\n\s+at /)
    expect(stdout).not.toContain('[E]')
  })

  it('--log-level debug adds stack traces; --json prints one JSON report', async () => {
    const { file } = await writeYml(fixtures.dir, '- id: boom\n  name: ./throws.mjs\n')
    const [debug, json] = await Promise.all([
      run(['--config', file, '--log-level', 'debug', 'check']),
      run(['--config', file, '--json', 'check']),
    ])
    expect(debug.stderr).toMatch(/Error: boom in apply\n\s+at /)
    const lines = json.stdout.trim().split('\n').map((line) => JSON.parse(line))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatchObject({ type: 'check', ok: false, failed: ['boom'], file })
    expect(lines[0].entries[0]).toMatchObject({ id: 'boom', status: 'failed', error: 'entry "boom": apply failed: boom in apply' })
  })

  it('a missing --config or a bad option is one line with a hint on stderr, exit 64; no cordis.yml at all runs the default composition', async () => {
    const [missing, option, bare, fallback] = await Promise.all([
      run(['--cwd', fixtures.dir, '--config', 'nowhere.yml', 'check']),
      run(['--frobnicate', 'check']),
      run([]),
      run(['--cwd', fixtures.dir, '--json', 'check']),
    ])
    expect(missing.code).toBe(64)
    expect(missing.stdout).toBe('')
    expect(missing.stderr).toBe(`goalkeeper: --config ${path.join(fixtures.dir, 'nowhere.yml')}: no such file (hint: a relative --config starts at --cwd; the default composition is --config ${path.join(repoRoot, 'cordis.yml')})\n`)
    expect(fallback.code, fallback.stderr).toBe(0)
    expect(jsonLines(fallback.stdout)[0]).toMatchObject({ file: path.join(repoRoot, 'cordis.yml'), ok: true })
    expect(option.code).toBe(64)
    expect(option.stderr).toBe(`goalkeeper: unknown option '--frobnicate' (hint: see goalkeeper --help)\n`)
    expect(bare.code).toBe(64)
    expect(bare.stderr).toMatch(/^Usage: goalkeeper/)
  })

  it('SIGTERM while check --watch runs: ordered shutdown, exit 0', async () => {
    const { file } = await writeYml(fixtures.dir, good)
    const handle = start(['--config', file, '-v', 'check', '--watch'])
    await handle.stderrMatches(/watching .* for changes/)
    handle.child.kill('SIGTERM')
    expect(await handle.exit, handle.stderr()).toBe(0)
    const lines = handle.stderr().split('\n').filter((line) => line.startsWith('[I] noisy'))
    expect(lines).toEqual([
      '[I] noisy start first',
      '[I] noisy start second',
      '[I] noisy stop-begin second',
      '[I] noisy stop-end second',
      '[I] noisy stop-begin first',
      '[I] noisy stop-end first',
    ])
    expect(handle.stdout()).toContain('2 entries: 2 loaded')
  })

  it('check --watch reloads on an edit of the file and prints the new report', async () => {
    const { file } = await writeYml(fixtures.dir, good)
    const handle = start(['--config', file, '-v', 'check', '--watch'])
    await handle.stderrMatches(/watching .* for changes/)
    await writeYml(fixtures.dir, good.replace('label: second', 'label: changed'))
    await handle.stderrMatches(/\[I\] loader reloaded .*: 1 reloaded, 1 unchanged/)
    handle.child.kill('SIGINT')
    expect(await handle.exit, handle.stderr()).toBe(0)
    expect(handle.stdout()).toContain('reloaded: 1 reloaded, 1 unchanged\n')
    expect(handle.stderr()).toContain('[I] noisy start changed')
  })

  it('a second signal during a stuck shutdown forces exit 130', async () => {
    const { file } = await writeYml(fixtures.dir, '- id: stuck\n  name: ./hang.mjs\n')
    const handle = start(['--config', file, 'check', '--watch'])
    await handle.stderrMatches(/watching .* for changes/)
    handle.child.kill('SIGTERM')
    await handle.stderrMatches(/teardown that never ends/)
    handle.child.kill('SIGTERM')
    expect(await handle.exit, handle.stderr()).toBe(130)
    expect(handle.stderr()).toContain('goalkeeper: SIGTERM during shutdown: exiting now')
  })
})
