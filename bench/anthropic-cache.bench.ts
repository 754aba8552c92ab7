// Prompt caching on a long goal round: billed input tokens over 50 model calls of one turn, with the
// anthropic provider's cache breakpoints and without them, against a local Messages API server that keeps
// a prompt cache the way the API describes it (a prefix up to a `cache_control` block is written when the
// request carries one, and read by a later request whose prefix up to one of its breakpoints matches).
// Tokens are counted as 4 characters each, on the serialized prefix; prices are claude-sonnet-4-6's.
// Run alone: node --import tsx bench/anthropic-cache.bench.ts
import http from 'node:http'
import { createHash } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { pathToFileURL } from 'node:url'
import { createHarness } from '@goalkeeper/test-kit'
import type { Context } from 'cordis'
import * as anthropic from '@goalkeeper/model-anthropic'

const STEPS = 50
const OUTPUT_CHARS = 1800
const PRICE = { input: 3, cacheWrite: 3.75, cacheRead: 0.3, output: 15 }

interface Totals { input: number; cacheWrite: number; cacheRead: number; output: number; requests: number }

const tokens = (text: string) => Math.ceil(text.length / 4)
const strip = (value: unknown): unknown => JSON.parse(JSON.stringify(value, (key, inner) => (key === 'cache_control' ? undefined : inner)))
const hash = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex')

/** Every prefix of a request that ends at a content block, in order, and whether that block is a breakpoint. */
function prefixes(body: any): { tokens: number; key: string; breakpoint: boolean }[] {
  const out: { tokens: number; key: string; breakpoint: boolean }[] = []
  const head = { tools: strip(body.tools ?? []), system: strip(body.system ?? []) }
  const systemMarked = (body.system ?? []).some((block: any) => block.cache_control) || (body.tools ?? []).some((tool: any) => tool.cache_control)
  out.push({ tokens: tokens(JSON.stringify(head)), key: hash(head), breakpoint: systemMarked })
  const messages: any[] = []
  for (const message of body.messages) {
    const copy = { role: message.role, content: [] as unknown[] }
    messages.push(copy)
    for (const block of message.content) {
      copy.content.push(strip(block))
      const prefix = { ...head, messages }
      out.push({ tokens: tokens(JSON.stringify(prefix)), key: hash(prefix), breakpoint: !!block.cache_control })
    }
  }
  return out
}

function startServer(totals: Totals) {
  const cache = new Set<string>()
  let calls = 0
  const server = http.createServer((req, res) => {
    const pieces: Buffer[] = []
    req.on('data', (piece: Buffer) => pieces.push(piece))
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(pieces).toString('utf8'))
      const all = prefixes(body)
      const total = all.at(-1)!.tokens
      // The longest cached prefix that ends at a breakpoint, or within the 20 blocks before one.
      let read = 0
      all.forEach((prefix, index) => {
        const nearBreakpoint = all.slice(index, index + 21).some((later) => later.breakpoint)
        if (nearBreakpoint && cache.has(prefix.key)) read = Math.max(read, prefix.tokens)
      })
      const marks = all.filter((prefix) => prefix.breakpoint)
      const lastMark = marks.at(-1)?.tokens ?? 0
      const write = Math.max(0, lastMark - read)
      for (const prefix of marks) cache.add(prefix.key)
      const input = total - read - write
      const output = 40
      totals.requests++
      totals.input += input
      totals.cacheWrite += write
      totals.cacheRead += read
      totals.output += output
      calls++
      const usage = { input_tokens: input, cache_creation_input_tokens: write, cache_read_input_tokens: read, output_tokens: 1 }
      const event = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`
      const done = calls >= STEPS
      const block = done
        ? [event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
          event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'All parts read.' } })]
        : [event('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: `toolu_bench_${calls}`, name: 'read_part', input: {} } }),
          event('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify({ part: calls }) } })]
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      res.end([
        event('message_start', { type: 'message_start', message: { id: `msg_bench_${calls}`, type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage } }),
        ...block,
        event('content_block_stop', { type: 'content_block_stop', index: 0 }),
        event('message_delta', { type: 'message_delta', delta: { stop_reason: done ? 'end_turn' : 'tool_use', stop_sequence: null }, usage: { output_tokens: output } }),
        event('message_stop', { type: 'message_stop' }),
      ].join(''))
    })
  })
  return new Promise<{ url: string; close: () => Promise<void> }>((resolve) => server.listen(0, '127.0.0.1', () => resolve({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((done) => { server.closeAllConnections(); server.close(() => done()) }),
  })))
}

const partsTool = {
  name: 'bench-parts',
  inject: ['tools'],
  apply(ctx: Context) {
    ctx.tools.register({
      name: 'read_part', description: 'Reads one part of the report.',
      parameters: { type: 'object', properties: { part: { type: 'number' } }, required: ['part'] },
      execute: (args: { part: number }) => `part ${args.part}: ${'lorem ipsum dolor sit amet '.repeat(OUTPUT_CHARS / 27)}`,
    })
  },
}

async function measure(cache: boolean): Promise<Totals> {
  const totals: Totals = { input: 0, cacheWrite: 0, cacheRead: 0, output: 0, requests: 0 }
  const server = await startServer(totals)
  const h = await createHarness({ agentLoop: { maxSteps: STEPS + 5 } })
  try {
    await h.load(partsTool)
    await h.load(anthropic, { apiKey: 'sk-ant-bench-0000000000', baseUrl: server.url, cache, countTokens: false })
    const agent = await h.createAgent({ model: 'anthropic' })
    agent.send({ content: `Read the ${STEPS - 1} parts of the report one at a time with read_part, then say you are done.` })
    await agent.whenIdle()
  } finally {
    await h.dispose()
    await server.close()
  }
  return totals
}

const cost = (t: Totals) => (t.input * PRICE.input + t.cacheWrite * PRICE.cacheWrite + t.cacheRead * PRICE.cacheRead + t.output * PRICE.output) / 1e6
/** What the input is billed as, in full-price input tokens. */
const billed = (t: Totals) => Math.round(t.input + t.cacheWrite * (PRICE.cacheWrite / PRICE.input) + t.cacheRead * (PRICE.cacheRead / PRICE.input))

export async function run() {
  const without = await measure(false)
  const withCache = await measure(true)
  const row = (label: string, t: Totals) => console.log(
    `${label.padEnd(16)}${String(t.requests).padStart(9)}${String(t.input + t.cacheWrite + t.cacheRead).padStart(12)}${String(t.input).padStart(11)}${String(t.cacheWrite).padStart(11)}${String(t.cacheRead).padStart(11)}${String(billed(t)).padStart(11)}${('$' + cost(t).toFixed(4)).padStart(10)}`)
  console.log(`${STEPS} model calls of one turn, ${OUTPUT_CHARS}-character tool outputs; tokens = characters / 4; claude-sonnet-4-6 prices`)
  console.log(`${''.padEnd(16)}${'requests'.padStart(9)}${'all input'.padStart(12)}${'uncached'.padStart(11)}${'cache wr.'.padStart(11)}${'cache rd.'.padStart(11)}${'billed'.padStart(11)}${'cost'.padStart(10)}`)
  row('without caching', without)
  row('with caching', withCache)
  console.log(`billed input with caching: ${(100 * billed(withCache) / billed(without)).toFixed(1)}% of without`)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await run()
