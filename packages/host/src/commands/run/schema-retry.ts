import type { MessageSource } from '@goalkeeper/session'
import { clipStart, oneLine } from '../render/text.ts'
import type { AgentRun, RestState } from './agent-run.ts'
import type { AnswerCheck, AnswerSchema } from './output-schema.ts'

/**
 * Whose message the retry is: a plugin's, not the person's, so the retry turn carries no human goal authority
 * (tool-goal) and does not count as human input to the goal's round driver.
 */
export const RETRY_SOURCE: MessageSource = { kind: 'plugin', name: 'output-schema' }

/** Problems listed on stderr; the model and --json get them all. */
const SHOWN_ERRORS = 5

/**
 * Checks the final answer against `--output-schema`. One that does not fit gets one more turn, the problems
 * given to the model to repair its answer, and is checked again. Returns the state after that turn and the
 * last check.
 */
export async function enforceAnswerSchema(run: AgentRun, schema: AnswerSchema): Promise<{ state: RestState; check: AnswerCheck }> {
  const first = schema.check(run.answer())
  report(run, schema, first, 1)
  if (first.valid) return { state: 'rest', check: first }
  run.agent.send({ content: retryPrompt(schema, first.errors), source: RETRY_SOURCE })
  const state = await run.untilRest()
  if (state === 'gone') return { state, check: first }
  const second = schema.check(run.answer())
  report(run, schema, second, 2)
  return { state, check: second }
}

function retryPrompt(schema: AnswerSchema, errors: string[]): string {
  return [
    `Your final answer is not valid against the JSON Schema "${schema.request.name}" it must follow:`,
    ...errors.map((error) => `- ${error}`),
    'Answer again with only one JSON value valid against the schema: no other text, no Markdown code fence.',
  ].join('\n')
}

function report(run: AgentRun, schema: AnswerSchema, check: AnswerCheck, attempt: 1 | 2): void {
  run.term.record({ type: 'output-schema', session: run.agent.id, attempt, valid: check.valid, ...(check.valid ? {} : { errors: check.errors }) })
  if (check.valid) return
  // Each line fits 80 columns with its `goalkeeper: ` prefix: the file keeps its end, the problems their start.
  const file = clipStart(schema.file, 25)
  run.term.note(attempt === 1 ? `the answer does not fit ${file}; asking once more:` : `the answer still does not fit ${file}:`)
  for (const error of check.errors.slice(0, SHOWN_ERRORS)) run.term.note(`  ${oneLine(error, 66)}`)
  if (check.errors.length > SHOWN_ERRORS) run.term.note(`  (and ${check.errors.length - SHOWN_ERRORS} more)`)
}
