import { type Exporter, Logger, type Message } from 'cordis'
import type { Env } from '@goalkeeper/loader'
import { HostError } from './errors.ts'
import { redact } from './redact.ts'

export const LogLevel = { error: 0, warn: 1, info: 2, debug: 3 } as const
export type LogLevelName = keyof typeof LogLevel
export const DEFAULT_LOG_LEVEL = LogLevel.warn

export function parseLogLevel(value: string | number): number {
  if (typeof value === 'number' && value >= 0 && value <= 3) return Math.trunc(value)
  const level = LogLevel[String(value).toLowerCase() as LogLevelName]
  if (level === undefined) {
    throw new HostError(`unknown log level "${value}"`, { hint: `use one of ${Object.keys(LogLevel).join(', ')}` })
  }
  return level
}

export interface ConsoleExporterOptions {
  /** 0 error, 1 warn, 2 info, 3 debug. Stack traces are printed only at debug. */
  level: number
  stream?: { write(text: string): unknown; isTTY?: boolean }
  /** Color depth for Logger.color; default: 3 on a TTY unless NO_COLOR is set, else off. */
  colors?: number | false
  /** Where secret values to mask come from (default: process.env). */
  env?: Env
}

const TAGS: Record<string, [tag: string, color: number]> = {
  error: ['[E]', 1],
  warn: ['[W]', 3],
  info: ['[I]', 6],
  debug: ['[D]', 8],
}

/** Prints log messages on stderr, one line each (continuation lines indented), with secrets masked. */
export function createConsoleExporter(options: ConsoleExporterOptions): Exporter {
  const stream = options.stream ?? process.stderr
  const env = options.env ?? process.env
  const colors = options.colors ?? (stream.isTTY && !env.NO_COLOR ? 3 : false)
  const exporter: Exporter = {
    colors,
    levels: { default: options.level },
    formatters: {
      // Cordis's default %c prints nothing, which hides names in its own messages.
      c: (value, self) => Logger.color(self, 6, value),
    },
    export(message: Message) {
      const args = options.level >= LogLevel.debug ? message.args : shorten(message.args)
      const text = Logger.format(exporter, { ...message, args })
      const [tag, color] = TAGS[message.type] ?? TAGS.info
      const head = `${Logger.color(exporter, color, tag)} ${Logger.color(exporter, Logger.code(message.name, exporter.colors), message.name)}`
      stream.write(redact(`${head} ${text.replace(/\n/g, '\n    ')}\n`, env))
    },
  }
  return exporter
}

/** Below debug an error is its message: stacks are for debugging, and the line should stay readable. */
function shorten(args: unknown[]): unknown[] {
  const result = args.map((arg) => (arg instanceof Error ? `${arg.name}: ${arg.message}` : arg))
  // A leading error becomes text; keep it out of the format-string position so `%` in it stays literal.
  if (args[0] instanceof Error) result.unshift('%s')
  return result
}
