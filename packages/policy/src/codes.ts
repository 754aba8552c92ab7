import { blockCodesOf, type BlockCodeOf } from '@goalkeeper/goal'

/**
 * Every goal block code a policy plugin of this repository may set (DESIGN.md section 10). Goal code that
 * decides who may claim a code reserves these, so a model cannot block its own goal under a policy's name.
 */
export const POLICY_BLOCK_CODES: readonly PolicyBlockCode[] = blockCodesOf('policy')

/** The goal package's table is the one list of codes; these are the rows whose owners are policy plugins. */
export type PolicyBlockCode = BlockCodeOf<'policy'>
