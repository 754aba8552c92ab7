import type { SessionRecord } from '@goalkeeper/session'
import type { Goal } from '../src/index.ts'

/** Hand-written session logs for the pure fold tests. */
export class LogBuilder {
  readonly records: SessionRecord[] = []
  at = 1_000

  constructor() {
    this.push('session/header', { version: 1, id: 's1', createdAt: this.at, cwd: '/tmp' })
  }

  push(type: string, data: unknown): SessionRecord {
    const record = { seq: this.records.length, at: this.at++, type, data }
    this.records.push(record)
    return record
  }

  change(op: string, goal: unknown): SessionRecord {
    return this.push('goal/change', { op, goal })
  }

  clear(id: string, revision: number): SessionRecord {
    return this.push('goal/change', { op: 'clear', goal: null, cleared: { id, revision } })
  }

  round(goalId: string, revision: number, round: number, id = `m${this.records.length}`): SessionRecord {
    return this.push('user/message', { id, content: [{ type: 'text', text: 'go' }], source: { kind: 'goal', goalId, revision, round } })
  }

  human(text = 'hello'): SessionRecord {
    return this.push('user/message', { id: `m${this.records.length}`, content: [{ type: 'text', text }], source: { kind: 'human' } })
  }
}

export function goal(overrides: Partial<Goal> = {}): Goal {
  return {
    id: 'g1',
    objective: 'Ship it',
    phase: 'active',
    revision: 1,
    maxGoalRounds: 5,
    roundsStarted: 0,
    createdAt: 100,
    updatedAt: 100,
    ...overrides,
  }
}
