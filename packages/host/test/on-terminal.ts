import { spawn } from 'node:child_process'
import path from 'node:path'
import { childEnv, nodeArgs, repoRoot } from '@goalkeeper/test-kit'
import { screenLines } from './screen.ts'

const cli = path.join(repoRoot, 'packages/host/src/cli.ts')

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`

/**
 * goalkeeper with its stdin, stdout and stderr on a pseudo-terminal (util-linux `script`), 200 columns wide
 * unless `columns` says otherwise; `keys` are typed raw. `env` adds to (or, with undefined, removes from) the
 * child's environment: `{ NO_COLOR: undefined }` lets it colour.
 */
export function startOnTerminal(args: string[], options: { columns?: number; env?: Record<string, string | undefined> } = {}) {
  const command = `stty cols ${options.columns ?? 200} rows 50; exec ${[process.execPath, ...nodeArgs(cli), ...args].map(quote).join(' ')}`
  const env = childEnv({ TERM: 'xterm', ...options.env })
  const child = spawn('script', ['-qfec', command, '/dev/null'], { cwd: repoRoot, env, stdio: ['pipe', 'pipe', 'pipe'] })
  let raw = ''
  const waiters: { test: () => boolean; resolve: () => void }[] = []
  const wake = () => {
    for (const waiter of waiters.filter((item) => item.test())) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve()
    }
  }
  child.stdout!.on('data', (chunk) => {
    raw += chunk
    wake()
  })
  child.stderr!.on('data', (chunk) => (raw += chunk))
  const exit = new Promise<number | null>((resolve, reject) => {
    child.on('error', (error) => reject(new Error(`cannot start \`script\` (util-linux) for a pseudo-terminal: ${error.message}`)))
    child.on('close', (code) => {
      if (waiters.length) reject(new Error(`exited with ${code} while waiting; the screen:\n${screenLines(raw).join('\n')}`))
      resolve(code)
    })
  })
  const screen = () => screenLines(raw)
  return {
    exit,
    screen,
    /** Every byte written, escape sequences included. */
    raw: () => raw,
    keys: (text: string) => void child.stdin!.write(text),
    /** Resolves when the rendered screen matches (the lines joined with \n). */
    until: (pattern: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const test = () => pattern.test(screen().join('\n'))
        if (test()) return resolve()
        waiters.push({ test, resolve })
        exit.catch(reject)
      }),
  }
}
