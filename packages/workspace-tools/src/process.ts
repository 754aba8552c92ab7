import { spawn } from 'node:child_process'
import { readFile, readdir } from 'node:fs/promises'
import { StringDecoder } from 'node:string_decoder'
import { delay } from '@goalkeeper/kit'
import { HeadTail } from './text.ts'

export interface ShellOptions {
  /**
   * May be `/proc/self/fd/N` (see walk.ts): the child changes into it before `exec`, where its copy of
   * the descriptor is still open (close-on-exec closes it only at `exec`), so the shell starts in
   * the directory the caller holds, wherever its path leads by then.
   */
  cwd: string
  timeoutMs: number
  signal: AbortSignal
  maxOutputChars: number
  env: NodeJS.ProcessEnv
  /** Shells of one plugin instance, so unloading it can stop them. */
  running: Set<{ stop(): Promise<void> }>
  /** Wraps the shell's command line (the sandbox); the wrapper must keep its children in the process group. */
  wrap?: (argv: string[]) => { file: string; args: string[] }
}

export interface ShellResult {
  pid: number
  exitCode: number | null
  exitSignal: NodeJS.Signals | null
  /** Why it was killed, if it was. */
  killed?: 'timeout' | 'abort' | 'shutdown'
  output: string
  /** A NUL byte was seen in the raw output. */
  binary: boolean
  durationMs: number
}

/** Time the group gets between SIGTERM and SIGKILL. */
const TERM_GRACE_MS = 1000
/** How long to wait for killed processes to vanish before giving up (they are SIGKILLed; this is a safety net). */
const GONE_TIMEOUT_MS = 3000
/** After the shell exits, how long background children may keep the output pipes open before we stop reading. */
const PIPE_DRAIN_MS = 200

// Unref'd: a pending grace timer must not keep a finished process alive.
const pause = (ms: number) => delay(ms, { ref: false })

function signalGroup(pgid: number, signal: NodeJS.Signals) {
  try {
    process.kill(-pgid, signal)
  } catch {
    // ESRCH: the group is already gone.
  }
}

/** Live (non-zombie) members of a process group; zombies count as gone because only their parent can reap them. */
async function groupAlive(pgid: number): Promise<boolean> {
  if (process.platform !== 'linux') {
    try {
      process.kill(-pgid, 0)
      return true
    } catch {
      return false
    }
  }
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true
  }
  return false
}

async function waitGroupGone(pgid: number) {
  const deadline = Date.now() + GONE_TIMEOUT_MS
  while (Date.now() < deadline && (await groupAlive(pgid))) await pause(20)
}

/**
 * Runs `command` with `/bin/sh -c` as the leader of a new process group, so a timeout or an abort
 * can kill the shell and everything it started (TERM, then KILL after a grace period), and only
 * settles once those processes are gone. Background processes left after a normal exit are not
 * killed; the pipes are just no longer read.
 */
export function runShell(command: string, options: ShellOptions): Promise<ShellResult> {
  const started = Date.now()
  return new Promise((resolve, reject) => {
    const argv = ['/bin/sh', '-c', command]
    const { file, args } = options.wrap ? options.wrap(argv) : { file: argv[0]!, args: argv.slice(1) }
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    const output = new HeadTail(options.maxOutputChars)
    let binary = false
    for (const stream of [child.stdout!, child.stderr!]) {
      const decoder = new StringDecoder('utf8')
      stream.on('data', (chunk: Buffer) => {
        binary ||= chunk.includes(0)
        output.push(decoder.write(chunk))
      })
      stream.on('end', () => output.push(decoder.end()))
    }
    let killed: ShellResult['killed']
    const exited = new Promise<[number | null, NodeJS.Signals | null]>((done) => child.once('exit', (code, signal) => done([code, signal])))
    const closed = new Promise<void>((done) => child.once('close', () => done()))

    let stopping: Promise<void> | undefined
    const stop = (reason: NonNullable<ShellResult['killed']>) => (stopping ??= (async () => {
      killed ??= reason
      signalGroup(child.pid!, 'SIGTERM')
      await Promise.race([exited, pause(TERM_GRACE_MS)])
      // Always, even if the shell left: its children may ignore TERM or outlive it.
      signalGroup(child.pid!, 'SIGKILL')
      await exited
      await waitGroupGone(child.pid!)
    })())
    const handle = { stop: () => stop('shutdown') }
    const onAbort = () => void stop('abort')
    let timer: NodeJS.Timeout | undefined
    const detach = () => {
      clearTimeout(timer)
      options.signal.removeEventListener('abort', onAbort)
    }

    child.once('error', (error) => {
      detach()
      options.running.delete(handle)
      reject(Object.assign(new Error(`Could not start ${file}: ${error.message}`), { code: 'SPAWN_FAILED' }))
    })
    if (child.pid === undefined) return

    options.running.add(handle)
    timer = setTimeout(() => void stop('timeout'), options.timeoutMs)
    options.signal.addEventListener('abort', onAbort, { once: true })
    if (options.signal.aborted) onAbort()

    void (async () => {
      const [exitCode, exitSignal] = await exited
      // Finished (or being stopped): a late timer or abort must not relabel the result.
      detach()
      await Promise.race([closed, pause(PIPE_DRAIN_MS)])
      child.stdout!.destroy()
      child.stderr!.destroy()
      await stopping
      options.running.delete(handle)
      resolve({ pid: child.pid!, exitCode, exitSignal, killed, output: output.toString(), binary, durationMs: Date.now() - started })
    })()
  })
}
