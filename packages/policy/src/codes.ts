/**
 * Every goal block code a policy plugin of this repository may set (DESIGN.md section 10). Goal code that
 * decides who may claim a code reserves these, so a model cannot block its own goal under a policy's name.
 */
export const POLICY_BLOCK_CODES = ['repeated-tool-call', 'mistake-limit', 'no-progress'] as const

export type PolicyBlockCode = (typeof POLICY_BLOCK_CODES)[number]
