// A hostile MCP stdio server, JSON-RPC written by hand so every misbehaviour is under the test's control.
// Flags (argv): --stderr-bytes N (stderr without a newline before anything else), --stderr-lines N (a flood
// of short lines), --tools N (that many tools listed), --hang-start (never answers initialize).
// Tools: echo { text }, big { bytes } (a text result of that size in one line), hang (never answers),
// crash (the process exits mid-call).
import { createInterface } from 'node:readline'

const flag = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`)
  return at === -1 ? fallback : Number(process.argv[at + 1] ?? 1)
}
const stderrBytes = flag('stderr-bytes', 0)
const stderrLines = flag('stderr-lines', 0)
const toolCount = flag('tools', 4)
const hangStart = process.argv.includes('--hang-start')

// Pipes are written synchronously on Linux: the client must read all of it before the handshake goes on.
if (stderrBytes) {
  const block = 'E'.repeat(1 << 20)
  for (let left = stderrBytes; left > 0; left -= block.length) process.stderr.write(block.slice(0, Math.min(left, block.length)))
}
for (let i = 0; i < stderrLines; i++) process.stderr.write(`noise line ${i}\n`)

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`)
const object = { type: 'object', properties: { text: { type: 'string' }, bytes: { type: 'number' } } }
const named = ['echo', 'big', 'hang', 'crash']
const tools = Array.from({ length: Math.max(toolCount, named.length) }, (_, i) => ({ name: named[i] ?? `extra_${i}`, description: `tool ${i}`, inputSchema: object }))

createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line)
  if (message.id === undefined) return
  const reply = (result) => send({ jsonrpc: '2.0', id: message.id, result })
  switch (message.method) {
    case 'initialize':
      if (hangStart) return
      return reply({ protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'hostile', version: '1.0.0' } })
    case 'tools/list':
      return reply({ tools })
    case 'tools/call': {
      const { name, arguments: args = {} } = message.params
      if (name === 'hang') return
      if (name === 'crash') process.exit(3)
      if (name === 'big') {
        // The id last, as the SDK's own servers write it; one line of `bytes` characters of text.
        const text = 'x'.repeat(Math.max(0, args.bytes - 100))
        return process.stdout.write(`{"result":{"content":[{"type":"text","text":"BEGIN ${text} END"}]},"jsonrpc":"2.0","id":${JSON.stringify(message.id)}}\n`)
      }
      return reply({ content: [{ type: 'text', text: `echo: ${args.text ?? ''}` }] })
    }
    default:
      return send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'not found' } })
  }
})
