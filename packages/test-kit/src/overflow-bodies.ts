// Context-length refusals as OpenAI-compatible servers send them: status and body, and the figures they state (limit and
// what the server counted for the request's input), for the classification tests and the loop's.

export interface OverflowBody {
  server: string
  status: number
  body: unknown
  contextLimit?: number
  requestTokens?: number
}

export const OVERFLOW_BODIES: OverflowBody[] = [
  {
    server: 'OpenAI (configured limit)',
    status: 400,
    body: { error: { message: 'Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in 290353 tokens. Please reduce the length of the messages.', type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } },
    contextLimit: 272_000,
    requestTokens: 290_353,
  },
  {
    server: 'OpenAI (model window)',
    status: 400,
    body: { error: { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 130552 tokens. Please reduce the length of the messages.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } },
    contextLimit: 128_000,
    requestTokens: 130_552,
  },
  {
    server: 'DeepSeek',
    status: 400,
    body: { error: { message: "This model's maximum context length is 65536 tokens. However, you requested 70183 tokens (68183 in the messages, 2000 in the completion). Please reduce the length of the messages or completion.", type: 'invalid_request_error', param: null, code: 'invalid_request_error' } },
    contextLimit: 65_536,
    requestTokens: 68_183,
  },
  {
    server: 'vLLM',
    status: 400,
    body: { object: 'error', message: "This model's maximum context length is 16384 tokens. However, you requested 122946 tokens (112946 in the messages, 10000 in the completion). Please reduce the length of the messages or completion.", type: 'BadRequestError', param: null, code: 400 },
    contextLimit: 16_384,
    requestTokens: 112_946,
  },
  {
    server: 'vLLM (input only)',
    status: 400,
    body: { object: 'error', message: "This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages.", type: 'BadRequestError', param: null, code: 400 },
    contextLimit: 4096,
    requestTokens: 5000,
  },
  {
    server: 'Ollama (OpenAI-compatible endpoint)',
    status: 400,
    body: { error: { message: 'the input length exceeds the context length', type: 'invalid_request_error', param: null, code: null } },
  },
  {
    server: 'Ollama (native error)',
    status: 400,
    body: { error: 'the input length exceeds the context length' },
  },
  {
    server: 'LM Studio',
    status: 400,
    body: { error: 'Input length 6491 exceeds context length 1500' },
    contextLimit: 1500,
    requestTokens: 6491,
  },
]
