// run_command in the workspace-write mode, in the real bubblewrap sandbox: the permissions plugin and the
// workspace tools composed on the harness, only the model scripted. Each check is also run unsandboxed
// (the full mode) where that shows the check can fail.
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import net from 'node:net'
import path from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { probeSandbox } from '@goalkeeper/sandbox'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import * as permissions from '../src/index.ts'
import { commands, runCalls } from './run.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

async function start(config: Record<string, unknown> = {}, sessionsInWorkspace = false) {
  h = await createHarness(sessionsInWorkspace ? { sessions: { dir: '' } } : {})
  await h.load(permissions, config)
  return { h, agent: await h.createAgent() }
}

beforeAll(async () => {
  const status = await probeSandbox()
  // The sandbox is part of the product on Linux: setup installs bubblewrap, so its absence is a failure here.
  expect(status, 'bubblewrap must work on this machine (node scripts/setup.mjs installs it as root)').toMatchObject({ available: true })
})

describe('run_command in the workspace-write sandbox', { timeout: 60_000 }, () => {
  it('writes inside the workspace and a private /tmp, and nowhere else', async () => {
    const { h, agent } = await start()
    // Outside /tmp, whose sandbox copy is private anyway (a checkout may well lie under /tmp): the home directory.
    const outside = path.join(os.homedir(), `.gk-sandbox-outside-${process.pid}`)
    const sibling = path.join(h.dir, 'sibling.txt')
    const hostTmp = path.join('/tmp', `gk-sandbox-${process.pid}`)
    try {
      const [inside, out, next, tmp, etc] = await runCalls(h, agent, commands(
        'echo made > made.txt && cat made.txt',
        `echo escaped > ${outside}`,
        `echo escaped > ${sibling}`,
        `echo private > ${hostTmp} && cat ${hostTmp}`,
        'touch /etc/gk-sandbox-test',
      ))
      expect(inside).toMatchObject({ ok: true })
      expect(await fs.readFile(path.join(h.workspace, 'made.txt'), 'utf8')).toBe('made\n')
      expect(inside.content).toContain('in the sandbox: files are writable only inside the workspace and /tmp, and there is no network')
      expect(out).toMatchObject({ ok: false, error: { code: 'COMMAND_FAILED' } })
      expect(out.content).toMatch(/Read-only file system/)
      await expect(fs.stat(outside)).rejects.toThrow(/ENOENT/)
      // The workspace's own parent is under /tmp: the write lands in the sandbox's private /tmp, not there.
      expect(next).toMatchObject({ ok: true })
      await expect(fs.stat(sibling)).rejects.toThrow(/ENOENT/)
      expect(tmp).toMatchObject({ ok: true, content: expect.stringContaining('private') })
      await expect(fs.stat(hostTmp)).rejects.toThrow(/ENOENT/)
      expect(etc).toMatchObject({ ok: false })
      await expect(fs.stat('/etc/gk-sandbox-test')).rejects.toThrow(/ENOENT/)
    } finally {
      await fs.rm(outside, { force: true })
      await fs.rm(hostTmp, { force: true })
    }
  })

  it('cannot reach a listener on 127.0.0.1, unless the network is allowed', async () => {
    let connections = 0
    const server = net.createServer((socket) => {
      connections++
      socket.end('hello from the host\n')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as net.AddressInfo).port
    const probe = `node -e "require('net').connect(${port}, '127.0.0.1').on('data', (d) => { process.stdout.write('GOT ' + d); process.exit(0) }).on('error', (e) => { console.log('ERROR ' + e.code); process.exit(7) })"`
    try {
      const { h, agent } = await start()
      const [closed] = await runCalls(h, agent, commands(probe))
      expect(closed).toMatchObject({ ok: false, error: { code: 'COMMAND_FAILED' } })
      expect(closed.content).toContain('ERROR ECONNREFUSED')
      expect(connections).toBe(0)
      await h.dispose()

      const open = await start({ network: true })
      const [reached] = await runCalls(open.h, open.agent, commands(probe))
      expect(reached).toMatchObject({ ok: true, content: expect.stringContaining('GOT hello from the host') })
      expect(connections).toBe(1)
    } finally {
      server.close()
    }
  })

  it('cannot see the host\'s secrets, neither in its environment nor through /proc', async () => {
    const secret = `sk-sandbox-${process.pid}-0123456789`
    process.env.GK_SANDBOX_TEST_API_KEY = secret
    process.env.GK_SANDBOX_PLAIN = 'plain-value'
    // A host process started with the key in its environment, as goalkeeper itself is started with the
    // provider's key (a process's later setenv calls do not show in /proc/PID/environ, its start does).
    const holder = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { env: { ...process.env }, stdio: 'ignore' })
    try {
      // Searches every process's environment it can see for the secret (the masked `***` would not match).
      const look = 'env | grep -c GK_SANDBOX || true; for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < $f; done 2>/dev/null | grep -c sk-sandbox- || true; ls -d /proc/[0-9]* | wc -l'
      const full = await start({ mode: 'full' })
      const [unsandboxed] = await runCalls(full.h, full.agent, commands(look))
      const [envCount, procCount] = unsandboxed.content.split('\n').map(Number)
      // Unsandboxed, the scrubbed environment still hides the key, but /proc gives the host's away.
      expect(envCount).toBe(1)
      expect(procCount).toBeGreaterThan(0)
      await full.h.dispose()

      const { h, agent } = await start()
      const [sandboxed] = await runCalls(h, agent, commands(look))
      const [env, proc, pids] = sandboxed.content.split('\n').map(Number)
      expect(env).toBe(1)
      expect(proc).toBe(0)
      // A new PID namespace: the shell, its pipeline and bwrap's init, not the host's processes.
      expect(pids).toBeLessThan(10)
      expect(sandboxed.content).not.toContain(secret)
    } finally {
      holder.kill('SIGKILL')
      delete process.env.GK_SANDBOX_TEST_API_KEY
      delete process.env.GK_SANDBOX_PLAIN
    }
  })

  it('builds and tests a small node project in the workspace', async () => {
    const { h, agent } = await start()
    await fs.writeFile(path.join(h.workspace, 'package.json'), JSON.stringify({ name: 'small', version: '1.0.0', scripts: { build: 'node build.mjs', test: 'node --test' } }))
    await fs.writeFile(path.join(h.workspace, 'build.mjs'), "import fs from 'node:fs'\nfs.mkdirSync('dist', { recursive: true })\nfs.writeFileSync('dist/sum.mjs', 'export const sum = (a, b) => a + b\\n')\n")
    await fs.writeFile(path.join(h.workspace, 'sum.test.mjs'), "import test from 'node:test'\nimport assert from 'node:assert'\nimport { sum } from './dist/sum.mjs'\ntest('sum', () => assert.equal(sum(1, 2), 3))\n")
    const [build] = await runCalls(h, agent, commands('npm run build && npm test'))
    expect(build, build.content).toMatchObject({ ok: true })
    expect(build.content).toMatch(/# pass 1/)
    expect(await fs.readFile(path.join(h.workspace, 'dist/sum.mjs'), 'utf8')).toContain('sum')
  })

  it('a timeout kills the sandboxed command and what it started', async () => {
    const { h, agent } = await start()
    const marker = `31.${process.pid}`
    const [slow] = await runCalls(h, agent, [['run_command', { command: `sleep ${marker} & sleep ${marker}`, timeout_ms: 500 }]])
    expect(slow).toMatchObject({ ok: false, error: { code: 'COMMAND_TIMEOUT' } })
    const left: string[] = []
    for (const pid of (await fs.readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
      const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')
      if (cmdline.includes(marker)) left.push(cmdline)
    }
    expect(left).toEqual([])
  })

  it('keeps the session store read-only when it lies in the workspace', async () => {
    // The default layout: the store at .goalkeeper/sessions under the workspace.
    const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'gk-store-')))
    h = await createHarness({ workspaceTools: false, sessions: { dir: path.join(workspace, '.goalkeeper/sessions') } })
    await h.load(await import('@goalkeeper/workspace-tools'), { root: workspace })
    await h.load(permissions, {})
    const agent = await h.createAgent({ cwd: workspace })
    await h.root.sessions.flush(agent.session)
    const file = agent.session.file!
    const before = await fs.readFile(file, 'utf8')
    const [append, remove, beside] = await runCalls(h, agent, commands(
      `echo forged >> ${path.relative(workspace, file)}`,
      'rm -rf .goalkeeper/sessions',
      'echo fine > .goalkeeper/notes.txt',
    ))
    expect(beside).toMatchObject({ ok: true })
    expect(append).toMatchObject({ ok: false })
    expect(append.content).toMatch(/Read-only file system/)
    expect(remove).toMatchObject({ ok: false })
    await h.root.sessions.flush(agent.session)
    const after = await fs.readFile(file, 'utf8')
    await h.dispose()
    await fs.rm(workspace, { recursive: true, force: true })
    expect(after.startsWith(before)).toBe(true)
    // Every line is still a record the store wrote (the command's text is in the log, as its call).
    expect(after.trim().split('\n').map((line) => JSON.parse(line).type)).not.toContain(undefined)
  })
})

describe('without a working sandbox', () => {
  it('workspace-write refuses commands with SANDBOX_UNAVAILABLE; full runs them as the user', async () => {
    const { h, agent } = await start({ bwrap: '/nonexistent/bwrap' })
    expect(h.root.permissions.describe().summary).toMatch(/^workspace-write: .*commands refused, no sandbox here: \/nonexistent\/bwrap was not found; install .*bubblewrap/)
    const [refused] = await runCalls(h, agent, commands('echo should-not-run > ran.txt'))
    expect(refused).toMatchObject({ ok: false, error: { code: 'SANDBOX_UNAVAILABLE' } })
    expect(refused.content).toMatch(/^Commands may only run in a sandbox here, and none is available: \/nonexistent\/bwrap was not found/)
    await expect(fs.stat(path.join(h.workspace, 'ran.txt'))).rejects.toThrow(/ENOENT/)
    // File tools are unaffected.
    const [written] = await runCalls(h, agent, [['write_file', { path: 'a.txt', content: 'x' }]])
    expect(written).toMatchObject({ ok: true })
    await h.dispose()

    const full = await start({ mode: 'full', bwrap: '/nonexistent/bwrap' })
    const [ran] = await runCalls(full.h, full.agent, commands('echo ran > ran.txt'))
    expect(ran).toMatchObject({ ok: true })
    expect(ran.content).not.toContain('sandbox')
    expect(await fs.readFile(path.join(full.h.workspace, 'ran.txt'), 'utf8')).toBe('ran\n')
  })
})
