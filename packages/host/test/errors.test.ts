// One-line errors: how a thrown value or a refused command line becomes the CLI's line, hint and exit
// code. runCli runs in this process; no child is spawned.
import path from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { asHostError, failureJson, failureLine, failureOf, HostError, usageFailureOf } from '../src/errors.ts'
import { ExitCode } from '../src/exit-codes.ts'
import { runCli } from '../src/program.ts'

const coded = (code: string, message = `${code} happened`) => Object.assign(new Error(message), { code })

afterEach(() => {
  vi.unstubAllEnvs()
})

describe('asHostError', () => {
  it('turns coded errors of the services into one-line HostErrors: bad input or state 64, anything else 70', () => {
    const cases: [string, number, string | undefined][] = [
      ['SESSION_NOT_FOUND', ExitCode.USAGE, undefined],
      ['GOAL_ALREADY_EXISTS', ExitCode.USAGE, undefined],
      ['NO_MODEL', ExitCode.USAGE, 'load a model provider in cordis.yml'],
      ['SESSION_WRITE_FAILED', ExitCode.RUNTIME, undefined],
    ]
    for (const [code, exitCode, hint] of cases) {
      const error = coded(code, 'first line\n  second line')
      const mapped = asHostError(error) as HostError
      expect(mapped).toBeInstanceOf(HostError)
      expect({ message: mapped.message, exitCode: mapped.exitCode, hint: mapped.hint, cause: mapped.cause }).toEqual({ message: 'first line second line', exitCode, hint, cause: error })
    }
  })

  it('keeps a HostError and an uncoded error as they are; a bad session id is bad input', () => {
    const host = new HostError('already one line')
    const plain = new Error('something broke')
    expect(asHostError(host)).toBe(host)
    expect(asHostError(plain)).toBe(plain)
    const id = asHostError(new TypeError('invalid session id "../x"')) as HostError
    expect([id.message, id.exitCode]).toEqual(['invalid session id "../x"', ExitCode.USAGE])
  })
})

describe('failure lines', () => {
  it('prints a HostError with its hint, anything else as an unexpected error (exit 70)', () => {
    const known = failureOf(new HostError('no session "zz"', { hint: 'check --cwd' }))
    expect(failureLine(known)).toBe('goalkeeper: no session "zz" (hint: check --cwd)\n')
    expect(known.exitCode).toBe(ExitCode.USAGE)
    expect(failureLine(failureOf(new HostError('no hint here', { exitCode: ExitCode.RUNTIME })))).toBe('goalkeeper: no hint here\n')
    const unexpected = failureOf(new RangeError('out of range\nat somewhere'))
    expect(failureLine(unexpected)).toBe('goalkeeper: unexpected error: out of range at somewhere (hint: run with --log-level debug for the stack trace)\n')
    expect(failureJson(unexpected)).toEqual({ type: 'error', message: 'unexpected error: out of range at somewhere', hint: 'run with --log-level debug for the stack trace', exitCode: 70 })
  })

  it("rewrites commander's messages into one line whose hint names the right help", () => {
    expect(usageFailureOf("error: unknown command 'rn'\n(Did you mean run?)\n", 'goalkeeper --help'))
      .toEqual({ message: "unknown command 'rn'", hint: 'did you mean run? see goalkeeper --help', exitCode: ExitCode.USAGE })
    expect(usageFailureOf("error: option '--max-rounds <n>' argument 'zero' is invalid. expected a positive whole number.\n", 'goalkeeper goal --help'))
      .toEqual({ message: "option '--max-rounds <n>' argument 'zero' is invalid: expected a positive whole number", hint: 'see goalkeeper goal --help', exitCode: ExitCode.USAGE })
  })
})

describe('runCli', () => {
  const capture = () => {
    const out = { stdout: '', stderr: '' }
    const io = { stdout: { write: (text: string) => (out.stdout += text) }, stderr: { write: (text: string) => (out.stderr += text) } }
    return { out, io }
  }

  it('answers a mistyped command with one line on stderr and exit 64; with --json also on stdout', async () => {
    vi.stubEnv('npm_package_name', '')
    const { out, io } = capture()
    expect(await runCli(['node', 'goalkeeper', '--json', 'rn'], io)).toBe(ExitCode.USAGE)
    expect(out.stderr).toBe("goalkeeper: unknown command 'rn' (hint: did you mean run? see goalkeeper --help)\n")
    expect(JSON.parse(out.stdout)).toEqual({ type: 'error', message: "unknown command 'rn'", hint: 'did you mean run? see goalkeeper --help', exitCode: 64 })
  })

  it('refuses a --config that is not there before anything loads', async () => {
    const { out, io } = capture()
    const config = path.join(import.meta.dirname, 'no-such-dir', 'cordis.yml')
    expect(await runCli(['node', 'goalkeeper', '--config', config, 'check'], io)).toBe(ExitCode.USAGE)
    expect(out.stderr).toMatch(new RegExp(`^goalkeeper: --config ${config.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: no such file \\(hint: a relative --config starts at --cwd; the default composition is --config .*cordis\\.yml\\)\\n$`))
    expect(out.stdout).toBe('')
  })
})
