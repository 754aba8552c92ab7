/**
 * Every code a goal is blocked with, and who may set it. Block codes name who stopped the goal and why, and
 * hosts act on them (exit codes, hints, automatic resumes), so each has exactly one owner: the only package
 * that blocks a goal with it. Everyone else reads the code through the names below, never as a literal.
 *
 * `limit` marks a stop by a limit rather than by a failure: raising the limit (or waiting for a usage limit
 * to reset) and resuming is the way on.
 */
export const BLOCK_CODES = {
  /** The model blocked its own goal (`update_goal block`); its words are the message. */
  'model-reported': { owner: 'tool-goal', kind: 'model', limit: false },
  'round-limit': { owner: 'goal-session', kind: 'driver', limit: true },
  'usage-limited': { owner: 'goal-session', kind: 'driver', limit: true },
  'turn-error': { owner: 'goal-session', kind: 'driver', limit: false },
  'max-tokens': { owner: 'goal-session', kind: 'driver', limit: false },
  'refused': { owner: 'goal-session', kind: 'driver', limit: false },
  'unknown-turn-outcome': { owner: 'goal-session', kind: 'driver', limit: false },
  'prompt-rejected': { owner: 'goal-session', kind: 'driver', limit: false },
  'queue-failed': { owner: 'goal-session', kind: 'driver', limit: false },
  'context-overflow': { owner: 'goal-session', kind: 'driver', limit: false },
  'budget-limited': { owner: 'goal-budget', kind: 'budget', limit: true },
  /** The judge refused the model's completion too many times in a row; its last reasons are the message. */
  'judge-rejected': { owner: 'goal-judge', kind: 'judge', limit: false },
  /** The judge could not be asked (errors, timeouts, answers off the schema) after its retries. */
  'judge-failed': { owner: 'goal-judge', kind: 'judge', limit: false },
  'repeated-tool-call': { owner: 'loop-guard', kind: 'policy', limit: false },
  'mistake-limit': { owner: 'mistake-limit', kind: 'policy', limit: false },
  'no-progress': { owner: 'no-progress', kind: 'policy', limit: false },
} as const satisfies Record<string, BlockCodeInfo>

export interface BlockCodeInfo {
  /** The package that blocks goals with this code. */
  owner: string
  kind: 'model' | 'driver' | 'budget' | 'judge' | 'policy'
  limit: boolean
}

export type BlockCode = keyof typeof BLOCK_CODES

/** The codes one kind of owner sets, as a union (`BlockCodeOf<'policy'>`). */
export type BlockCodeOf<K extends BlockCodeInfo['kind']> = { [C in BlockCode]: (typeof BLOCK_CODES)[C]['kind'] extends K ? C : never }[BlockCode]

/** The codes by name: owners block with these, and front ends compare with them. */
export const BLOCK = {
  modelReported: 'model-reported',
  roundLimit: 'round-limit',
  usageLimited: 'usage-limited',
  turnError: 'turn-error',
  maxTokens: 'max-tokens',
  refused: 'refused',
  unknownOutcome: 'unknown-turn-outcome',
  promptRejected: 'prompt-rejected',
  queueFailed: 'queue-failed',
  contextOverflow: 'context-overflow',
  budgetLimited: 'budget-limited',
  judgeRejected: 'judge-rejected',
  judgeFailed: 'judge-failed',
  repeatedToolCall: 'repeated-tool-call',
  mistakeLimit: 'mistake-limit',
  noProgress: 'no-progress',
} as const satisfies Record<string, BlockCode>

/** Every code of one kind of owner, in table order. */
export function blockCodesOf<K extends BlockCodeInfo['kind']>(kind: K): BlockCodeOf<K>[] {
  return (Object.keys(BLOCK_CODES) as BlockCode[]).filter((code) => BLOCK_CODES[code].kind === kind) as BlockCodeOf<K>[]
}

export function isBlockCode(code: unknown): code is BlockCode {
  return typeof code === 'string' && Object.hasOwn(BLOCK_CODES, code)
}

/** Whether a goal blocked with `code` was stopped by a limit (rounds, budget, the provider's usage), not by a failure. */
export function isLimitCode(code: unknown): boolean {
  return isBlockCode(code) && BLOCK_CODES[code].limit
}

/**
 * The code every block the model asks for is stored with, so the model never picks one: its own words go
 * in the message.
 */
export const MODEL_BLOCK_CODE = BLOCK.modelReported

/** The code a goal is blocked with when one of its budgets is used up (`@goalkeeper/goal-budget` sets it). */
export const BUDGET_BLOCK_CODE = BLOCK.budgetLimited
