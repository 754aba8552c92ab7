import { describeError } from '@goalkeeper/kit'
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
}

type Signal = 'SIGINT' | 'SIGTERM'

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

  constructor(private options: SignalControllerOptions) {
    this.target = options.process ?? process
  }

  install(): this {
    this.target.on('SIGINT', this.listener)
    this.target.on('SIGTERM', this.listener)
    return this
  }

  uninstall(): void {
    this.target.off('SIGINT', this.listener)
    this.target.off('SIGTERM', this.listener)
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
    this.options.note(`${signal}: shutting down (send it again to force)`)
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
