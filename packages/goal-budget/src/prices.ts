import { calcPrice } from '@pydantic/genai-prices'
import { formatBudgetUsd } from '@goalkeeper/goal'
import type { ProviderDescription } from '@goalkeeper/model'
import type { Usage } from '@goalkeeper/session'

/** US dollars per million tokens; `cachedInput` defaults to `input` (no cache discount assumed). */
export interface ModelPrice {
  input: number
  cachedInput?: number
  /** Input written to a prompt cache (Anthropic bills it above plain input); defaults to `input`. */
  cacheWriteInput?: number
  output: number
}

/** The price key of a provider: `vendor/model`, as in cordis.yml's `prices`. */
export function priceKey(description: ProviderDescription | undefined): string | undefined {
  return description?.vendor && description.model ? `${description.vendor}/${description.model}` : undefined
}

/**
 * What one model call cost, or null when no price is known: never a guess of zero. A configured price wins;
 * then an offline provider (no network, no bill) costs 0; then the bundled table of `@pydantic/genai-prices`.
 * A call that `failed` (a 429, a 5xx, a dropped connection) without a usage report was not billed: it costs 0,
 * so one refused request never makes the goal's cost unknown. With a usage report it costs what was reported.
 */
export function costOf(description: ProviderDescription | undefined, usage: Usage | undefined, overrides: Record<string, ModelPrice>, options: { failed?: boolean } = {}): number | null {
  if (!usage) return description?.offline || options.failed ? 0 : null
  const key = priceKey(description)
  const override = key === undefined ? undefined : overrides[key]
  if (override) {
    const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens)
    const written = Math.min(usage.cacheWriteInputTokens ?? 0, usage.inputTokens - cached)
    const perToken = (price: number) => price / 1_000_000
    return (usage.inputTokens - cached - written) * perToken(override.input)
      + cached * perToken(override.cachedInput ?? override.input)
      + written * perToken(override.cacheWriteInput ?? override.input)
      + usage.outputTokens * perToken(override.output)
  }
  if (description?.offline) return 0
  if (!description?.vendor || !description.model) return null
  try {
    const price = calcPrice({ input_tokens: usage.inputTokens, cache_read_tokens: usage.cachedInputTokens ?? 0, cache_write_tokens: usage.cacheWriteInputTokens ?? 0, output_tokens: usage.outputTokens }, description.model, { providerId: description.vendor })
    return price && Number.isFinite(price.total_price) ? price.total_price : null
  } catch {
    // A table that cannot price this model is the same as no price.
    return null
  }
}

/** Whether calls of this provider can be priced: a configured price, an offline provider, or the bundled table. */
export function priceKnown(description: ProviderDescription | undefined, overrides: Record<string, ModelPrice>): boolean {
  return costOf(description, { inputTokens: 0, outputTokens: 0 }, overrides) !== null
}

/** Why a cost budget cannot be kept (one line), and what to do about it (may span lines: a cordis.yml excerpt). */
export interface CostBudgetProblem {
  message: string
  fix: string
}

/**
 * Why a cost budget cannot be kept on this provider, or undefined when it can: the refusal names the exact
 * `prices` key to set, with an example entry, before any paid call is made.
 */
export function unpricedCostBudget(description: ProviderDescription | undefined, name: string, costUsd: number, overrides: Record<string, ModelPrice>): CostBudgetProblem | undefined {
  if (priceKnown(description, overrides)) return undefined
  const key = priceKey(description)
  return {
    message: `the cost budget (${formatBudgetUsd(costUsd)}) cannot be kept: model ${key ?? name} has no known price`,
    fix: key
      ? `set its price (US dollars per million tokens) under goal-budget \`prices\` in cordis.yml, e.g.\n  prices:\n    ${key}: { input: 0.5, output: 1.5 }`
      : `provider ${name} does not say which vendor and model it serves, so no price can be set for it; use a token or time budget`,
  }
}
