import { goalSummaryFold } from '@goalkeeper/goal'
import type { SummaryFold } from '@goalkeeper/session'
import { workerSummaryFold } from './commands/lookup/worker-fold.ts'

/**
 * What `goalkeeper sessions` and the board print per session besides its summary: the goal and the fleet
 * worker. Every session written through the CLI keeps them in its entry of the listing's index, so that
 * those listings read no log.
 */
export const LISTING_FOLDS: Readonly<Record<string, SummaryFold>> = { goal: goalSummaryFold, worker: workerSummaryFold }
