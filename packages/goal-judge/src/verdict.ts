import { isRecord } from '@goalkeeper/kit'
import { JUDGE_VERDICTS, MAX_JUDGEMENT_ITEMS, MAX_JUDGEMENT_TEXT, type JudgeVerdict } from '@goalkeeper/goal'

/** What a judge answers, after validation. */
export interface Verdict {
  verdict: JudgeVerdict
  reasons: string[]
  missing: string[]
}

/** The answer's schema, shown to the judge model word for word and enforced by `parseVerdict`. */
export const VERDICT_SCHEMA = {
  type: 'object',
  properties: {
    verdict: { type: 'string', enum: JUDGE_VERDICTS },
    reasons: { type: 'array', items: { type: 'string', minLength: 1, maxLength: MAX_JUDGEMENT_TEXT }, minItems: 1, maxItems: MAX_JUDGEMENT_ITEMS },
    missing: { type: 'array', items: { type: 'string', minLength: 1, maxLength: MAX_JUDGEMENT_TEXT }, maxItems: MAX_JUDGEMENT_ITEMS },
  },
  required: ['verdict', 'reasons', 'missing'],
  additionalProperties: false,
} as const

/**
 * Reads the judge's answer: one JSON object matching `VERDICT_SCHEMA`, alone or in a ```json fence. Anything
 * else is refused with the first rule it breaks, never repaired: a judge whose answer must be guessed at has
 * not decided.
 */
export function parseVerdict(text: string): { ok: true; value: Verdict } | { ok: false; why: string } {
  const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text)
  let data: unknown
  try {
    data = JSON.parse(fenced ? fenced[1] : text)
  } catch {
    return { ok: false, why: 'the answer is not a JSON object' }
  }
  if (!isRecord(data)) return { ok: false, why: 'the answer is not a JSON object' }
  const extra = Object.keys(data).filter((key) => !(key in VERDICT_SCHEMA.properties))
  if (extra.length) return { ok: false, why: `unexpected keys ${extra.join(', ')}` }
  if (!JUDGE_VERDICTS.includes(data.verdict as JudgeVerdict)) return { ok: false, why: `verdict is not one of ${JUDGE_VERDICTS.join(', ')}` }
  const reasons = textList(data.reasons, 'reasons', 1)
  if (typeof reasons === 'string') return { ok: false, why: reasons }
  const missing = textList(data.missing, 'missing', 0)
  if (typeof missing === 'string') return { ok: false, why: missing }
  return { ok: true, value: { verdict: data.verdict as JudgeVerdict, reasons, missing } }
}

function textList(value: unknown, key: string, min: number): string[] | string {
  if (!Array.isArray(value)) return `${key} is not a list`
  if (value.length < min || value.length > MAX_JUDGEMENT_ITEMS) return `${key} must have ${min} to ${MAX_JUDGEMENT_ITEMS} items, has ${value.length}`
  const bad = value.findIndex((item) => typeof item !== 'string' || !item.trim() || item.length > MAX_JUDGEMENT_TEXT)
  if (bad >= 0) return `${key}[${bad}] is not non-empty text of at most ${MAX_JUDGEMENT_TEXT} characters`
  return value.map((item: string) => item.trim())
}
