import { type ChildProcess, spawn } from 'node:child_process'
import { deserializeMessage, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client'
import { type CutLine, LineSplitter } from './lines.ts'

export interface StdioOptions {
  command: string
  args: string[]
  env: Record<string, string>
  cwd?: string
  /** A message (one stdout line) longer than this is not parsed: a result is cut (see `cutResult`), anything else dropped. */
  maxMessageBytes: number
  /** How many characters of an oversized result's text are kept. */
  maxResultChars: number
  /** The longest stderr line passed on; the rest of a longer line is dropped. */
  maxStderrLine: number
  /** A stderr line, or the start of one over `maxStderrLine` (`cut`), passed on as soon as it is that long. */
  onStderr: (line: string, cut: boolean) => void
  /** A message was too long to be read (`id` when it answered a request). */
  onOversized: (bytes: number, id: string | number | undefined) => void
}

/** Where a cut result's `_meta` says how long it was. */
export const CUT_META = 'goalkeeper/cut'

/** The last bytes of an oversized line kept to find its id (servers often write `"id"` last). */
const TAIL_BYTES = 256

/**
 * MCP over a child process's stdio, read in linear time. The SDK's stdio transport joins every chunk to
 * the whole buffer and searches it from the start again, which costs quadratic time on a large message,
 * and drops the connection at 10 MiB; a server writing stderr without newlines grows a string forever.
 * Here both streams go through `LineSplitter`: a result longer than `maxMessageBytes` arrives cut, with a
 * note, and the connection is kept.
 */
export class LineStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: <T extends JSONRPCMessage>(message: T) => void
  private child: ChildProcess | undefined
  private closing: Promise<void> | undefined

  constructor(private readonly options: StdioOptions) {}

  get pid(): number | undefined {
    return this.child?.pid
  }

  start(): Promise<void> {
    const { options } = this
    return new Promise((resolve, reject) => {
      const child = spawn(options.command, options.args, { env: options.env, cwd: options.cwd, stdio: ['pipe', 'pipe', 'pipe'], shell: false })
      this.child = child
      const stdout = new LineSplitter(options.maxMessageBytes, (line) => this.message(line), (cut) => this.oversized(cut), TAIL_BYTES)
      const stderr = new LineSplitter(
        options.maxStderrLine,
        (line) => options.onStderr(line.toString('utf8'), false),
        (cut) => options.onStderr(cut.head.toString('utf8'), true),
        0,
        true,
      )
      child.on('error', (error) => {
        reject(error)
        this.onerror?.(error)
      })
      child.on('spawn', () => resolve())
      child.on('close', () => {
        if (this.child === child) this.child = undefined
        this.onclose?.()
      })
      child.stdin!.on('error', (error) => this.onerror?.(error))
      child.stdout!.on('data', (chunk: Buffer) => stdout.push(chunk))
      child.stdout!.on('error', (error) => this.onerror?.(error))
      child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk))
      child.stderr!.on('error', () => {})
    })
  }

  private message(line: Buffer) {
    let message: JSONRPCMessage
    try {
      message = deserializeMessage(line.toString('utf8').replace(/\r$/, ''))
    } catch (error) {
      // As the SDK: a line that is not JSON is skipped (servers print banners); a malformed message is reported.
      if (!(error instanceof SyntaxError)) this.onerror?.(error as Error)
      return
    }
    this.onmessage?.(message)
  }

  private oversized(cut: CutLine) {
    const result = cutResult(cut, this.options.maxResultChars)
    this.options.onOversized(cut.bytes, (result as { id?: string | number } | undefined)?.id)
    if (result) this.onmessage?.(result)
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin
      if (!stdin) return reject(new Error('Not connected'))
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once('drain', resolve)
    })
  }

  /** Ends the server: stdin closed, then TERM after 2 s, then KILL after 2 s more (as the SDK's transport). */
  close(): Promise<void> {
    const child = this.child
    if (!child) return Promise.resolve()
    this.closing ??= (async () => {
      const closed = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('close', () => resolve())))
      const within = (ms: number) => Promise.race([closed.then(() => true), new Promise<boolean>((resolve) => setTimeout(resolve, ms, false).unref())])
      child.stdin?.end()
      if (!(await within(2000))) {
        child.kill('SIGTERM')
        if (!(await within(2000))) child.kill('SIGKILL')
      }
      await closed
    })()
    return this.closing
  }
}

const ID_AT_START = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")/
const ID_AT_END = /"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$/

/**
 * An oversized response read from its ends: the request id (at the start or the end of the line) and the
 * first text block's first `maxChars` characters, as a `tools/call` result whose `_meta` says how long
 * the message was. Undefined when no id is found or the line is not a result (the request then fails at
 * its deadline).
 */
export function cutResult(cut: CutLine, maxChars: number): JSONRPCMessage | undefined {
  const head = cut.head.toString('utf8')
  const match = ID_AT_START.exec(head) ?? ID_AT_END.exec(cut.tail.toString('utf8'))
  if (!match || !/^\s*\{[^]{0,200}?"result"\s*:/.test(head)) return undefined
  const id = JSON.parse(match[1]!) as string | number
  const at = /"text"\s*:\s*"/.exec(head)
  const text = at ? jsonStringPrefix(head, at.index + at[0].length, maxChars) : ''
  return {
    jsonrpc: '2.0',
    id,
    result: { content: [{ type: 'text', text }], _meta: { [CUT_META]: { bytes: cut.bytes } } },
  } as JSONRPCMessage
}

/** The decoded start of the JSON string whose contents begin at `from`: at most `maxChars` characters. */
function jsonStringPrefix(text: string, from: number, maxChars: number): string {
  let i = from
  let chars = 0
  // Escapes are at most 6 characters (`\uXXXX`); stop at the string's end or once enough is read.
  while (i < text.length && chars < maxChars) {
    const c = text.charCodeAt(i)
    if (c === 34 /* " */) break
    if (c === 92 /* \ */) {
      const width = text[i + 1] === 'u' ? 6 : 2
      if (i + width > text.length) break
      i += width
    } else i++
    chars++
  }
  try {
    return JSON.parse(`"${text.slice(from, i)}"`) as string
  } catch {
    return ''
  }
}
