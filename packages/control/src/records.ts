import type { GoalBudgets } from '@goalkeeper/goal'
import type { ControlSource } from './protocol.ts'

/** Session record of a control applied from another process, written after the goal change it made. */
export const CONTROL_RECORD = 'control/applied'
export interface ControlRecord {
  action: 'pause' | 'resume' | 'raise' | 'clear' | 'answer'
  /** Where the person acted: the board's page or the CLI. */
  source: ControlSource
  /** The goal revision the control made (none for clear and answer). */
  revision?: number
  budgets?: GoalBudgets
  maxRounds?: number
  callId?: string
  answer?: 'allow' | 'deny'
}

declare module '@goalkeeper/session' {
  interface RecordData {
    /** A person's control from another process (the board, `goalkeeper pause`/`resume`): what and from where. */
    'control/applied': ControlRecord
  }
}
