import { readFileSync } from 'node:fs'
import { describeError, isAlive } from '@goalkeeper/kit'
import { ExitCode } from './exit-codes.ts'

export interface InterruptInfo {
  signal: 'SIGINT'
  /** How many SIGINTs this process has received, this one included. */
  count: number
}

/** Returns true when it handled the SIGINT (for example by cancelling the running turn), so no shutdown starts. */
export type InterruptHandler = (info: InterruptInfo) => boolean

export interface SignalControllerOptions {
  /** The ordered shutdown. */
  shutdown: () => Promise<void>
  /** Ends the process; called once the shutdown finished, or at once when forced. */
  exit: (code: number) => void
  /** Progress lines for the person at the terminal. */
  note: (line: string) => void
  process?: Pick<NodeJS.Process, 'on' | 'off'>
  /**
   * Milliseconds between checks that the parent process is still there (0: no checks). A wrapper that is
   * killed alone (`kill` of an npx or npm process) does not pass the signal on; without this check
   * goalkeeper would go on running, orphaned, with nobody to read its output.
   */
  parentCheckMs?: number
  /** How many generations up to watch: 2 also covers the shell npm puts between itself and goalkeeper. */
  parentGenerations?: number
}

/** The pids of the parent, its parent, ... (`count` of them, fewer where /proc cannot tell). */
function ancestors(count: number): number[] {
  const pids = [process.ppid]
  while (pids.length < count) {
    const parent = parentOf(pids.at(-1)!)
    if (!parent || parent <= 1) break
    pids.push(parent)
  }
  return pids
}

function parentOf(pid: number): number | undefined {
  try {
    // /proc/PID/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses, so read after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) || undefined
  } catch {
    return undefined
  }
}

/** `parent-exit`: the process that started goalkeeper ended; handled like SIGTERM. */
type Signal = 'SIGINT' | 'SIGTERM' | 'SIGHUP' | 'parent-exit'
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/**
 * SIGINT and SIGTERM handling (DESIGN.md section 11). A SIGINT is first offered to the interrupt handlers,
 * newest first; when none handles it, or on SIGTERM, the ordered shutdown starts and the process exits
 * with `exitCode` when it is done. Any signal during the shutdown forces the exit.
 */
export class SignalController {
  /** Exit code after a signal-started shutdown; a command that is interrupted mid-work may change it. */
  exitCode: number = ExitCode.OK
  private handlers: InterruptHandler[] = []
  private interrupts = 0
  private stopping = false
  private target: Pick<NodeJS.Process, 'on' | 'off'>
  private listener = (signal: Signal) => this.handle(signal)
  private parentTimer: NodeJS.Timeout | undefined

  constructor(private options: SignalControllerOptions) {
    this.target = options.process ?? process
  }

  install(): this {
    for (const signal of SIGNALS) this.target.on(signal, this.listener)
    const every = this.options.parentCheckMs ?? 0
    if (every > 0) {
      const watched = ancestors(this.options.parentGenerations ?? 1)
      this.parentTimer = setInterval(() => watched.some((pid) => !isAlive(pid)) && this.parentGone(), every)
      this.parentTimer.unref()
    }
    return this
  }

  uninstall(): void {
    for (const signal of SIGNALS) this.target.off(signal, this.listener)
    clearInterval(this.parentTimer)
  }

  private parentGone(): void {
    clearInterval(this.parentTimer)
    this.parentTimer = undefined
    if (!this.stopping) this.handle('parent-exit')
  }

  /** Lets a command claim SIGINTs, e.g. "the first Ctrl-C cancels the running turn". Returns an unregister function. */
  onInterrupt(handler: InterruptHandler): () => void {
    this.handlers.push(handler)
    return () => {
      this.handlers = this.handlers.filter((item) => item !== handler)
    }
  }

  handle(signal: Signal): void {
    if (this.stopping) {
      this.options.note(`${signal} during shutdown: exiting now`)
      this.options.exit(ExitCode.INTERRUPTED)
      return
    }
    if (signal === 'SIGINT' && this.offer({ signal, count: ++this.interrupts })) return
    this.stopping = true
    this.options.note(signal === 'parent-exit' ? 'the parent process ended: shutting down' : `${signal}: shutting down (send it again to force)`)
    this.options.shutdown().then(
      () => this.options.exit(this.exitCode),
      (error) => {
        this.options.note(`shutdown failed: ${describeError(error)}`)
        this.options.exit(ExitCode.RUNTIME)
      },
    )
  }

  private offer(info: InterruptInfo): boolean {
    for (const handler of [...this.handlers].reverse()) {
      try {
        if (handler(info)) return true
      } catch (error) {
        this.options.note(`interrupt handler failed: ${describeError(error)}`)
      }
    }
    return false
  }
}
