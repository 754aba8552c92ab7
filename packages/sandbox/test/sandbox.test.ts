import { spawnSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { probeSandbox, sandboxedCommand } from '../src/index.ts'

describe('probeSandbox', () => {
  it('finds a working bwrap, once per executable', async () => {
    const status = await probeSandbox()
    expect(status).toMatchObject({ available: true, tool: 'bubblewrap', path: expect.stringMatching(/\/bwrap$/), version: expect.stringMatching(/^\d/) })
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
})

describe('sandboxedCommand', () => {
  const policy = { bwrap: '/usr/bin/bwrap', writable: ['/w'], readOnly: ['/w/.goalkeeper/sessions'], network: false, cwd: '/w/src' }

  it('mounts /tmp and /run before the workspace, the store over the workspace, and ends with the command', () => {
    const { file, args } = sandboxedCommand(policy, ['/bin/sh', '-c', 'make'])
    expect(file).toBe('/usr/bin/bwrap')
    const at = (flag: string, value: string) => args.findIndex((arg, index) => arg === flag && args[index + 1] === value)
    expect(at('--tmpfs', '/tmp')).toBeLessThan(at('--bind', '/w'))
    expect(at('--tmpfs', '/run')).toBeLessThan(at('--bind', '/w'))
    expect(at('--bind', '/w')).toBeLessThan(at('--ro-bind', '/w/.goalkeeper/sessions'))
    expect(args).toContain('--unshare-net')
    expect(args).toContain('--unshare-pid')
    expect(args.slice(-5)).toEqual(['/w/src', '--', '/bin/sh', '-c', 'make'])
    const open = sandboxedCommand({ ...policy, network: true }, ['true']).args
    expect(open).not.toContain('--unshare-net')
    expect(open.join(' ')).not.toContain('--tmpfs /run')
  })

  it('runs a command that sees its own PID namespace', async () => {
    const { path } = (await probeSandbox()) as { path: string }
    const { file, args } = sandboxedCommand({ bwrap: path, writable: [], readOnly: [], network: false, cwd: '/' }, ['/bin/sh', '-c', 'echo $$'])
    expect(spawnSync(file, args, { encoding: 'utf8' }).stdout.trim()).toBe('2')
  })
})
