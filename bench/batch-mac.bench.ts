// The cost of verifying a session log's mac chain, one mac per line against one mac per batch of lines,
// next to the raw parse measured in the same run: the lines are split and parsed as replay does, and the
// chain is checked on top. A micro-benchmark of the check alone (no file, no records kept), run alone:
// node --import tsx bench/batch-mac.bench.ts
import { createHmac, randomBytes } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { median, payload, seconds } from './session-figures.ts'

const LINES = 100_000
const ROUNDS = 5
const BATCHES = [1, 3, 10, 100]
const key = randomBytes(32)
const SUFFIX = ',"mac":"'.length + 64 + 2

/** A log text of `LINES` tool results, one mac per `batch` lines, on the first line of each batch. */
function log(batch: number): string {
  const lines: string[] = []
  let last = ''
  for (let i = 0; i < LINES; i += batch) {
    const bodies: string[] = []
    for (let j = i; j < Math.min(LINES, i + batch); j++) bodies.push(JSON.stringify({ seq: j, at: 1, type: 'tool/result', data: payload(j) }))
    if (bodies.length > 1) bodies[0] = `${bodies[0].slice(0, -1)},"batch":${bodies.length}}`
    last = createHmac('sha256', key).update(last).update('\n').update(bodies.join('\n')).digest('hex')
    lines.push(`${bodies[0].slice(0, -1)},"mac":"${last}"}`, ...bodies.slice(1))
  }
  return `${lines.join('\n')}\n`
}

function rawParse(text: string): number {
  const start = process.hrtime.bigint()
  for (const line of text.split('\n')) if (line) JSON.parse(line)
  return LINES / seconds(start)
}

/** Parse and check: each line with a mac starts a batch (one HMAC over its lines), as the batched reader does. */
function verified(text: string): number {
  const start = process.hrtime.bigint()
  let last = ''
  let hmac: ReturnType<typeof createHmac> | undefined
  let expected = ''
  let left = 0
  const close = () => {
    if (hmac && hmac.digest('hex') !== expected) throw new Error('chain broken')
    hmac = undefined
  }
  for (const line of text.split('\n')) {
    if (!line) continue
    // Where replay's splitMac looks: at the end of the line, never searched for.
    const at = line.length - SUFFIX
    const mac = at > 0 && line.startsWith(',"mac":"', at) ? line.slice(at + 8, at + 72) : undefined
    const body = mac ? `${line.slice(0, at)}}` : line
    const value = JSON.parse(body)
    if (mac) {
      close()
      hmac = createHmac('sha256', key).update(last).update('\n').update(body)
      expected = last = mac
      left = (value.batch ?? 1) - 1
    } else {
      hmac!.update('\n').update(line)
      left--
    }
    if (left === 0) close()
  }
  close()
  return LINES / seconds(start)
}

export async function run() {
  const rows: string[] = []
  for (const batch of BATCHES) {
    const text = log(batch)
    rawParse(text)
    verified(text)
    const raws: number[] = []
    const ours: number[] = []
    for (let round = 0; round < ROUNDS; round++) {
      raws.push(rawParse(text))
      ours.push(verified(text))
    }
    const raw = median(raws)
    const rate = median(ours)
    const perLine = (1e6 / rate - 1e6 / raw).toFixed(2)
    rows.push(`mac per ${String(batch).padStart(3)} line${batch === 1 ? ' ' : 's'}  parse+check ${rate.toFixed(0).padStart(7)} lines/s   raw parse ${raw.toFixed(0).padStart(7)} lines/s   ratio ${((rate / raw) * 100).toFixed(0).padStart(3)}%   check ${perLine} us/line`)
  }
  console.log(`batch-mac (${LINES} lines of about 350 bytes, median of ${ROUNDS} alternating rounds)`)
  for (const row of rows) console.log(row)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
