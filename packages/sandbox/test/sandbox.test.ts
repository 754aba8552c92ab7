import { spawnSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseStatus } from '../src/probe.ts'
import { probeSandbox, SANDBOX_UID, sandboxedCommand } from '../src/index.ts'

describe('probeSandbox', () => {
  it('finds a working bwrap whose commands hold no capability, once per executable', async () => {
    const status = await probeSandbox()
    const uid = process.getuid!() === 0 ? SANDBOX_UID : process.getuid!()
    expect(status).toMatchObject({ available: true, tool: 'bubblewrap', path: expect.stringMatching(/\/bwrap$/), version: expect.stringMatching(/^\d/), capabilities: 'dropped', uid })
    expect(probeSandbox()).toBe(probeSandbox())
  })

  it('says what is missing and how to get it', async () => {
    expect(await probeSandbox('/nonexistent/bwrap')).toEqual({ available: false, reason: '/nonexistent/bwrap was not found; install the Debian/Ubuntu package bubblewrap (apt-get install bubblewrap)' })
  })

  it('an executable that cannot make the namespaces is no sandbox', async () => {
    // `false` runs and fails, as bwrap does where namespaces are not allowed.
    const status = await probeSandbox('false')
    expect(status).toMatchObject({ available: false, reason: expect.stringMatching(/\/false cannot create the namespaces it needs here/) })
  })

  it('a bwrap that leaves capabilities, or root, is no sandbox', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-probe-'))
    try {
      const leaky = path.join(dir, 'leaky-bwrap')
      await fs.writeFile(leaky, '#!/bin/sh\nprintf "Uid:\\t1000\\t1000\\t1000\\t1000\\nCapEff:\\t000001fffeffffff\\n"\n', { mode: 0o755 })
      expect(await probeSandbox(leaky)).toEqual({ available: false, reason: `${leaky} left capabilities to the sandboxed command (CapEff 000001fffeffffff), so a command of root could remount the file system writable` })
      const silent = path.join(dir, 'silent-bwrap')
      await fs.writeFile(silent, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
      expect(await probeSandbox(silent)).toMatchObject({ available: false, reason: expect.stringContaining('(CapEff unknown)') })
    } finally {
      await fs.rm(dir, { recursive: true, force: true })
    }
  })

  it('reads the capabilities and the uid from /proc/self/status', () => {
    expect(parseStatus('Name:\tcat\nUid:\t1000\t1000\t1000\t1000\nCapInh:\t0000000000000000\nCapEff:\t0000000000000000\n')).toEqual({ capEff: '0000000000000000', uid: 1000 })
    expect(parseStatus('nothing')).toEqual({ capEff: undefined, uid: undefined })
  })
})

describe('sandboxedCommand', () => {
  const policy = { bwrap: '/usr/bin/bwrap', writable: ['/w'], readOnly: ['/w/.goalkeeper/sessions'], network: false, cwd: '/w/src' }
  const at = (args: string[], flag: string, value: string) => args.findIndex((arg, index) => arg === flag && args[index + 1] === value)

  it('mounts /tmp and /run before the workspace, the store over the workspace, and ends with the command', () => {
    const { file, args } = sandboxedCommand(policy, ['/bin/sh', '-c', 'make'])
    expect(file).toBe('/usr/bin/bwrap')
    expect(at(args, '--tmpfs', '/tmp')).toBeLessThan(at(args, '--bind', '/w'))
    expect(at(args, '--tmpfs', '/run')).toBeLessThan(at(args, '--bind', '/w'))
    expect(at(args, '--bind', '/w')).toBeLessThan(at(args, '--ro-bind', '/w/.goalkeeper/sessions'))
    expect(args).toContain('--unshare-net')
    expect(args).toContain('--unshare-pid')
    expect(at(args, '--cap-drop', 'ALL')).toBeGreaterThan(0)
    expect(args).toContain('--disable-userns')
    expect(args.slice(-5)).toEqual(['/w/src', '--', '/bin/sh', '-c', 'make'])
    const open = sandboxedCommand({ ...policy, network: true }, ['true']).args
    expect(open).not.toContain('--unshare-net')
    expect(open.join(' ')).not.toContain('--tmpfs /run')
  })

  it('hides the key after every other mount, and binds a workspace at / first so /proc and /tmp stay private', () => {
    const hidden = [{ path: '/w/.config/goalkeeper', directory: true }, { path: '/w/key', directory: false }]
    const { args } = sandboxedCommand({ ...policy, hidden }, ['true'])
    expect(at(args, '--tmpfs', '/w/.config/goalkeeper')).toBeGreaterThan(at(args, '--ro-bind', '/w/.goalkeeper/sessions'))
    expect(at(args, '--remount-ro', '/w/.config/goalkeeper')).toBeGreaterThan(at(args, '--tmpfs', '/w/.config/goalkeeper'))
    expect(args[at(args, '--ro-bind', '/dev/null') + 2]).toBe('/w/key')
    const root = sandboxedCommand({ ...policy, writable: ['/'], readOnly: [] }, ['true']).args
    expect(root.slice(0, 3)).toEqual(['--bind', '/', '/'])
    expect(at(root, '--proc', '/proc')).toBeGreaterThan(0)
    expect(at(root, '--ro-bind', '/')).toBe(-1)
    expect(at(root, '--ro-bind', '/sys')).toBeGreaterThan(0)
  })
})

/** A real workspace and the real bwrap: each hostile command is run, its failure asserted, and the host checked. */
describe('a sandboxed command holds no privilege, as root or not', { timeout: 60_000 }, () => {
  async function sandbox() {
    const status = await probeSandbox()
    expect(status, 'bubblewrap must work on this machine (node scripts/setup.mjs installs it as root)').toMatchObject({ available: true })
    const workspace = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'gk-hostile-')))
    const run = (command: string) => {
      const { file, args } = sandboxedCommand({ bwrap: (status as { path: string }).path, writable: [workspace], readOnly: [], network: false, cwd: workspace }, ['/bin/sh', '-c', command])
      const result = spawnSync(file, args, { encoding: 'utf8', timeout: 20_000 })
      return { status: result.status, output: `${result.stdout}${result.stderr}` }
    }
    return { workspace, run, dispose: () => fs.rm(workspace, { recursive: true, force: true }) }
  }
  const mark = (name: string) => `/etc/gk-hostile-${process.pid}-${name}`
  const expectAbsent = async (file: string) => {
    const found = await fs.stat(file).then(() => true, () => false)
    if (found) await fs.rm(file, { force: true })
    expect(found, `${file} reached the host`).toBe(false)
  }

  it('has no capabilities, and another uid than root', async () => {
    const s = await sandbox()
    try {
      const { status, output } = s.run('cat /proc/self/status')
      expect(status).toBe(0)
      expect(output).toMatch(/^CapEff:\s*0+$/m)
      expect(output).toMatch(/^CapPrm:\s*0+$/m)
      expect(output).toMatch(/^CapAmb:\s*0+$/m)
      expect(parseStatus(output).uid).toBe(process.getuid!() === 0 ? SANDBOX_UID : process.getuid!())
      // Running a program does not bring capabilities back (root in a namespace would regain them at exec).
      expect(s.run('/bin/sh -c "cat /proc/self/status"').output).toMatch(/^CapEff:\s*0+$/m)
    } finally {
      await s.dispose()
    }
  })

  it('still writes the workspace, as the user who owns it on the host', async () => {
    const s = await sandbox()
    try {
      expect(s.run('echo made > made.txt && mkdir sub && echo deeper > sub/f && cat made.txt')).toEqual({ status: 0, output: 'made\n' })
      const made = await fs.stat(path.join(s.workspace, 'made.txt'))
      expect(made.uid).toBe(process.getuid!())
      expect(await fs.readFile(path.join(s.workspace, 'sub', 'f'), 'utf8')).toBe('deeper\n')
    } finally {
      await s.dispose()
    }
  })

  const hostile: [string, (etc: string, workspace: string) => string, RegExp][] = [
    ['remount / read-write', (etc) => `mount -o remount,rw / && echo pwn > ${etc}`, /mount|permission|denied|superuser/i],
    ['mount a file system', (etc, ws) => `mkdir -p m && mount -t tmpfs none ${ws}/m && mount --bind ${ws}/m /etc && echo pwn > ${etc}`, /mount|permission|denied|superuser/i],
    ['bind mount over /etc', (etc, ws) => `mount --bind ${ws} /etc && echo pwn > ${etc}`, /mount|permission|denied|superuser/i],
    ['unshare into a user namespace of its own', (etc) => `unshare -r -m sh -c 'mount -o remount,rw / && echo pwn > ${etc}'`, /unshare/],
    ['unshare a mount namespace', (etc) => `unshare -m sh -c 'mount -o remount,rw / && echo pwn > ${etc}'`, /unshare/],
    ['a nested bwrap', (etc) => `bwrap --bind / / --cap-add ALL -- sh -c 'echo pwn > ${etc}'`, /bwrap/],
    ['nsenter into PID 1', (etc) => `nsenter -t 1 -a sh -c 'echo pwn > ${etc}'`, /nsenter/],
    ['a raw socket', () => `perl -MSocket -e 'socket(my $s, PF_INET, SOCK_RAW, 1) or die "raw socket: $!\\n"; print "opened\\n"'`, /raw socket: Operation not permitted/],
    ['write /etc', (etc) => `echo pwn > ${etc}`, /Read-only file system/],
    ['chown a workspace file to root', (_, ws) => `touch ${ws}/owned && chown 0:0 ${ws}/owned && chmod u+s ${ws}/owned && echo done`, /chown|Operation not permitted|invalid/i],
  ]

  it.each(hostile.map(([name, command, message], index) => ({ name, command, message, index })))('refuses: $name', async ({ command, message, index }) => {
    const s = await sandbox()
    try {
      const etc = mark(String(index))
      const result = s.run(command(etc, s.workspace))
      expect(result.status, result.output).not.toBe(0)
      expect(result.output).toMatch(message)
      expect(result.output).not.toContain('opened')
      await expectAbsent(etc)
      // Nothing got root's set-uid bit on the host either.
      const owned = await fs.stat(path.join(s.workspace, 'owned')).catch(() => undefined)
      if (owned) expect(owned.mode & 0o4000).toBe(0)
    } finally {
      await s.dispose()
    }
  })
})
