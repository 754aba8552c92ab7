// A tool plugin: registers `word_count`, which the model can call like any workspace tool. The tool
// pipeline validates the arguments against `parameters` before `execute` runs, so `execute` gets a string.
import type { Context } from 'cordis'
import Schema from 'schemastery'
import type {} from '@goalkeeper/tools'

export const name = 'word-count'
// ctx.tools is the registry of @goalkeeper/tools; the loader starts this entry once it is there.
export const inject = ['tools']

export interface Config {
  maxChars: number
}

export const Config: Schema<Config> = Schema.object({
  maxChars: Schema.natural().min(1).default(100_000).description('Longest text the tool counts.'),
})

export const apply = (ctx: Context, config: Config) => {
  // register() is an effect: unloading this plugin removes the tool, also in the middle of a goal.
  ctx.tools.register<{ text: string }>({
    name: 'word_count',
    description: 'Counts the words, lines and characters of a text.',
    parameters: {
      type: 'object',
      properties: { text: { type: 'string', description: 'The text to count.' } },
      required: ['text'],
      additionalProperties: false,
    },
    execute({ text }) {
      if (text.length > config.maxChars) {
        // An error result the model reads; the turn goes on.
        return { ok: false, content: '', error: { code: 'TEXT_TOO_LONG', message: `the text has ${text.length} characters; at most ${config.maxChars}` } }
      }
      const words = text.split(/\s+/).filter(Boolean).length
      const lines = text ? text.split('\n').length : 0
      return `${words} words, ${lines} lines, ${text.length} characters`
    },
  })
}
