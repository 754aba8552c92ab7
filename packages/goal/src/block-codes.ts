/**
 * The code every block the model asks for is stored with. Block codes name who stopped the goal and
 * why (`round-limit`, `usage-limited`, a policy's `mistake-limit`, ...), and hosts act on them (exit
 * codes, hints), so the model never picks one: its own words go in the message.
 */
export const MODEL_BLOCK_CODE = 'model-reported'

/** The code a goal is blocked with when one of its budgets is used up (`@goalkeeper/goal-budget` sets it). */
export const BUDGET_BLOCK_CODE = 'budget-limited'
