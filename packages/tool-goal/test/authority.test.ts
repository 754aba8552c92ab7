import { describe, expect, it } from 'vitest'
import type { GoalState } from '@goalkeeper/goal'
import type { MessageSource } from '@goalkeeper/session'
import { authorityOf } from '../src/index.ts'
import { checkAuthority } from '../src/authority.ts'

const live: GoalState = {
  id: 'g1', objective: 'x', phase: 'active', revision: 2, maxGoalRounds: 9, roundsStarted: 4, createdAt: 1, updatedAt: 1, activation: 'armed',
}
const human: MessageSource = { kind: 'human' }
const plugin: MessageSource = { kind: 'plugin', name: 'loop-guard' }
const round = (over: Partial<{ goalId: string; revision: number; round: number }> = {}): MessageSource => ({ kind: 'goal', goalId: 'g1', revision: 2, round: 4, ...over })

describe('authorityOf', () => {
  it('a human message in the turn is human authority, whatever else is there', () => {
    expect(authorityOf([plugin, human], live)).toBe('human')
    expect(authorityOf([round(), human], undefined)).toBe('human')
  })

  it('only the exact current round of the armed goal is goal-round authority', () => {
    expect(authorityOf([round()], live)).toBe('goal-round')
    expect(authorityOf([round({ goalId: 'g0' })], live)).toBe('none')
    expect(authorityOf([round({ revision: 1 })], live)).toBe('none')
    expect(authorityOf([round({ round: 3 })], live)).toBe('none')
    expect(authorityOf([round({ round: 5 })], live)).toBe('none')
    expect(authorityOf([round()], { ...live, activation: 'disarmed' })).toBe('none')
    expect(authorityOf([round()], undefined)).toBe('none')
  })

  it('plugin messages and empty turns grant nothing', () => {
    expect(authorityOf([plugin], live)).toBe('none')
    expect(authorityOf([], live)).toBe('none')
  })
})

describe('checkAuthority', () => {
  it('create, edit, pause and resume need a human', () => {
    for (const action of ['create', 'edit', 'pause', 'resume'] as const) {
      expect(checkAuthority(action, 'human', live, 3)).toBeUndefined()
      expect(checkAuthority(action, 'goal-round', live, 3)?.code).toBe('GOAL_UNAUTHORIZED')
      expect(checkAuthority(action, 'none', live, 3)?.code).toBe('GOAL_UNAUTHORIZED')
    }
  })

  it('complete and block are allowed to a human or the current round; block waits for the threshold', () => {
    expect(checkAuthority('complete', 'goal-round', { ...live, roundsStarted: 1 }, 3)).toBeUndefined()
    expect(checkAuthority('complete', 'none', live, 3)?.code).toBe('GOAL_UNAUTHORIZED')
    expect(checkAuthority('block', 'goal-round', { ...live, roundsStarted: 2 }, 3)?.code).toBe('GOAL_BLOCK_TOO_EARLY')
    expect(checkAuthority('block', 'goal-round', { ...live, roundsStarted: 3 }, 3)).toBeUndefined()
    expect(checkAuthority('block', 'human', { ...live, roundsStarted: 0 }, 3)).toBeUndefined()
    expect(checkAuthority('block', 'none', live, 3)?.code).toBe('GOAL_UNAUTHORIZED')
  })
})
