// What the provider tests (OpenAI-compatible and Anthropic) feed a provider and read back from it.
import type { ModelChunk, ModelRequest } from '@goalkeeper/model'

/** A one-message request with no tools; `overrides` replace whole fields. */
export const modelRequest = (overrides: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
  tools: [],
  ...overrides,
})

/** Every chunk of a provider's stream, in order. */
export const collectChunks = async (stream: AsyncIterable<ModelChunk>): Promise<ModelChunk[]> => {
  const chunks: ModelChunk[] = []
  for await (const chunk of stream) chunks.push(chunk)
  return chunks
}
