// Every encoding of a random secret, through every output path of the CLI: the session file, `--json`,
// `show` (plain and JSON) and the progress lines. The secret is only in the environment (a credential
// variable); the scripted model and a command print it in every encoding, and nothing written may hold it.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { readFile } from 'node:fs/promises'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const project = useProject()
const SEED = 20261201

const hex = (byte: number) => byte.toString(16).padStart(2, '0')
const base32 = (bytes: Buffer) => {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
  const bits = [...bytes].map((b) => b.toString(2).padStart(8, '0')).join('')
  return (bits.match(/.{1,5}/g) ?? []).map((chunk) => alphabet[parseInt(chunk.padEnd(5, '0'), 2)]).join('')
}

/** The secret written every way a command or a model could write it. */
export function encodingsOf(secret: string): Record<string, string> {
  const bytes = Buffer.from(secret)
  const half = Math.floor(secret.length / 2)
  return {
    plain: secret,
    'od -An -tx1': bytes.reduce((out, b, i) => `${out}${i % 16 === 0 ? '\n' : ''} ${hex(b)}`, ''),
    'per-byte %xx': [...bytes].map((b) => `%${hex(b)}`).join(''),
    'two lines': `${secret.slice(0, half)}\n${secret.slice(half)}`,
    reversed: [...secret].reverse().join(''),
    base32: base32(bytes),
    'base32 after a prefix': base32(Buffer.from(`MY_SERVICE_TOKEN=${secret}`)),
    base64: Buffer.from(`token ${secret}`).toString('base64'),
    '\\u00xx': [...bytes].map((b) => `\\u00${hex(b)}`).join(''),
    'one character per space': [...secret].join(' '),
    hex: bytes.toString('hex'),
  }
}

/**
 * Whether `text` still gives the secret away: read as it is and, for JSON lines, every string inside,
 * each also without whitespace, with escapes decoded, as hex digits only, and reversed.
 */
function leaks(text: string, secret: string, encodings: Record<string, string>): string | undefined {
  const strings = [text]
  for (const line of text.split('\n')) {
    try {
      const walk = (value: unknown): void => {
        if (typeof value === 'string') strings.push(value)
        else if (value && typeof value === 'object') for (const [key, item] of Object.entries(value)) (strings.push(key), walk(item))
      }
      walk(JSON.parse(line))
    } catch {
      // Not a JSON line: read as text above.
    }
  }
  const hexSecret = Buffer.from(secret).toString('hex')
  const reversed = [...secret].reverse().join('')
  for (const value of strings) {
    for (const [name, encoded] of Object.entries(encodings)) if (value.includes(encoded)) return `${name} in ${JSON.stringify(value.slice(0, 300))}`
    const squeezed = value.replace(/\s+|\\n/g, '')
    const decoded = squeezed.replace(/%([0-9a-f]{2})|\\+u([0-9a-f]{4})/gi, (_, a, b) => String.fromCharCode(parseInt(a ?? b, 16)))
    for (const view of [squeezed, decoded]) if (view.includes(secret) || view.includes(reversed)) return `a normalised form in ${JSON.stringify(value.slice(0, 300))}`
    if (value.replace(/[^0-9a-f]/gi, '').toLowerCase().includes(hexSecret)) return `hex digits in ${JSON.stringify(value.slice(0, 300))}`
  }
  return undefined
}

// The model writes every encoding in its answer, passes each as a tool argument (a path that does not
// exist, so the error repeats it), and has a command print them all.
const script = `
import { readFileSync } from 'node:fs'
const encodings = JSON.parse(readFileSync(path.join(dir, 'encodings.json'), 'utf8'))
export default many((request) => {
  const results = turnResults(request)
  if (!results.length) return { text: 'Listing: ' + encodings.join(' | '), toolCalls: [
    ...encodings.map((encoded) => ({ name: 'read_file', arguments: { path: encoded } })),
    { name: 'run_command', arguments: { command: 'cat encodings.txt' } },
  ] }
  return { text: 'Done: ' + encodings.join(' | ') }
})`

describe('secrets in every encoding through every output', { timeout: CLI_TIMEOUT * 2 }, () => {
  it(`never reach the session file, --json, show or the progress lines (fast-check seed ${SEED})`, async () => {
    console.log(`fast-check seed ${SEED}`)
    const p = await project({ script })
    const char = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.')
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: char, minLength: 12, maxLength: 40 }), async (secret) => {
        const encodings = encodingsOf(secret)
        await writeFile(path.join(p.dir, 'encodings.json'), JSON.stringify(Object.values(encodings)))
        await writeFile(path.join(p.workspace, 'encodings.txt'), `${Object.values(encodings).join('\n')}\n`)
        const env = { MY_SERVICE_TOKEN: secret }
        const json = await run([...p.globals, '--json', 'run', 'List the encodings'], { env })
        const plain = await run([...p.globals, 'run', 'List the encodings'], { env })
        expect([json.code, plain.code], plain.stderr).toEqual([0, 0])
        const id = sessionIdOf(plain.stderr)
        const [shown, shownJson] = await Promise.all([run([...p.globals, 'show', id], { env }), run([...p.globals, '--json', 'show', id], { env })])
        const outputs: Record<string, string> = {
          'run --json stdout': json.stdout,
          'run --json stderr': json.stderr,
          'run stdout': plain.stdout,
          'progress lines': plain.stderr,
          show: shown.stdout,
          'show --json': shownJson.stdout,
          'session file': await readFile(path.join(p.sessions, `${id}.jsonl`), 'utf8'),
        }
        // The outputs do hold what was written, masked: a run that wrote nothing would prove nothing.
        expect(plain.stdout).toContain('Done: [redacted MY_SERVICE_TOKEN]')
        expect(outputs['session file']).toContain('encodings.txt')
        for (const [where, text] of Object.entries(outputs)) expect(leaks(text, secret, encodings), where).toBeUndefined()
      }),
      { seed: SEED, numRuns: 3, endOnFailure: true },
    )
  })
})
