import type { ModelChunk, ModelProvider, ModelRequest } from '../src/index.ts'

export const request = (text = 'hi'): ModelRequest => ({
  model: 'm',
  system: 'sys',
  messages: [{ role: 'user', content: [{ type: 'text', text }] }],
  tools: [{ name: 'read_file', description: 'd', parameters: { type: 'object', properties: { path: { type: 'string' } } } }],
  maxTokens: 100,
})

export async function collect(provider: ModelProvider, req: ModelRequest = request(), signal = new AbortController().signal) {
  const chunks: ModelChunk[] = []
  for await (const chunk of provider.stream(req, signal)) chunks.push(chunk)
  return chunks
}

export const textOf = (chunks: ModelChunk[]) => chunks.filter((c) => c.type === 'text').map((c) => (c as { text: string }).text).join('')
export const finishOf = (chunks: ModelChunk[]) => chunks[chunks.length - 1]
