// The exit code of a check, read from the last line run_command writes, with and without the sandbox's note.
import { describe, expect, it } from 'vitest'
import { exitCodeOf } from '../src/check.ts'

describe('exitCodeOf', () => {
  it('reads the exit code of a plain and of a sandboxed command', () => {
    expect(exitCodeOf('ok\n[Exit code 0 after 0.1 s.]')).toBe(0)
    expect(exitCodeOf('1 test failed\n[Exit code 3 after 2.8 s.]\n')).toBe(3)
    expect(exitCodeOf('ok\n[Exit code 0 after 2.8 s; in the sandbox: files are writable only inside the workspace and /tmp, and there is no network.]')).toBe(0)
    expect(exitCodeOf('[Exit code 1 after 0.0 s; in the sandbox: files are writable only inside the workspace and /tmp.]')).toBe(1)
  })

  it('has none for a timeout, a stop, a signal, or output that only quotes the line', () => {
    expect(exitCodeOf('[Timed out after 300 ms; the command and its child processes were killed.]')).toBeNull()
    expect(exitCodeOf('[Stopped (user) after 1.0 s; the command and its child processes were killed.]')).toBeNull()
    expect(exitCodeOf('[Killed by signal SIGKILL after 1.0 s.]')).toBeNull()
    expect(exitCodeOf('[Exit code 0 after 0.1 s.]\nmore output')).toBeNull()
    expect(exitCodeOf('')).toBeNull()
  })
})
