import { spawn } from 'node:child_process'
import { describeError } from '@goalkeeper/kit'

export interface RunOptions {
  /** What the hook reads on stdin (one JSON object). */
  input: string
  cwd: string
  env: NodeJS.ProcessEnv
  timeoutMs: number
  /** Bytes kept of stdout and of stderr each. */
  maxOutput: number
}

/** How one hook process ended, before anything is read into its output. */
export interface ProcessResult {
  exitCode: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  durationMs: number
  /** Killed at its timeout. */
  timedOut: boolean
  /** stdout or stderr went over `maxOutput`; what is kept is its beginning. */
  outputCut: boolean
  /** It could not be started (no shell, no such directory). */
  spawnError?: string
}

/** Collects at most `max` bytes of a stream and keeps reading the rest, so the writer never blocks on a full pipe. */
function capped(max: number) {
  const chunks: Buffer[] = []
  let kept = 0
  let cut = false
  return {
    push(chunk: Buffer) {
      if (kept >= max) {
        cut = true
        return
      }
      const part = chunk.length > max - kept ? chunk.subarray(0, max - kept) : chunk
      if (part.length < chunk.length) cut = true
      chunks.push(part)
      kept += part.length
    },
    get cut() {
      return cut
    },
    text: () => Buffer.concat(chunks).toString('utf8'),
  }
}

/**
 * Runs one hook command with `sh -c` in a process group of its own, feeding it `input`. At the timeout the
 * whole group is killed (a hook's children go too), and the pipes are let go of even if a process that left
 * the group still holds them. Never rejects.
 */
export function runCommand(command: string, options: RunOptions): Promise<ProcessResult> {
  const started = performance.now()
  const stdout = capped(options.maxOutput)
  const stderr = capped(options.maxOutput)
  return new Promise((resolve) => {
    let timedOut = false
    let settled = false
    let timer: NodeJS.Timeout | undefined
    const finish = (exitCode: number | null, signal: NodeJS.Signals | null, spawnError?: string) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({
        exitCode,
        signal,
        stdout: stdout.text(),
        stderr: stderr.text(),
        durationMs: Math.round(performance.now() - started),
        timedOut,
        outputCut: stdout.cut || stderr.cut,
        ...(spawnError !== undefined ? { spawnError } : {}),
      })
    }
    let child: ReturnType<typeof spawn>
    try {
      child = spawn('/bin/sh', ['-c', command], { cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] })
    } catch (error) {
      finish(null, null, describeError(error))
      return
    }
    timer = setTimeout(() => {
      timedOut = true
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      } catch {
        // The group is already gone.
      }
    }, options.timeoutMs)
    child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk))
    child.on('error', (error) => finish(null, null, describeError(error)))
    child.on('exit', (code, signal) => {
      // A killed hook's grandchild that left the group can hold the pipes open: stop waiting for them.
      if (timedOut) {
        child.stdout!.destroy()
        child.stderr!.destroy()
        finish(code, signal)
      }
    })
    child.on('close', (code, signal) => finish(code, signal))
    // A hook that does not read its input closes the pipe early; that is its business.
    child.stdin!.on('error', () => {})
    child.stdin!.end(options.input)
  })
}
