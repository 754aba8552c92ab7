// Every text of prompt.ts with sample values, as file snapshots: a change of wording is a one-line diff
// in __snapshots__/prompt.test.ts.snap, reviewed with the change.
import { describe, expect, it } from 'vitest'
import type { GoalState } from '@goalkeeper/goal'
import { checkPrompt, goalToolsPrompt, wrapUpMessage, wrapUpRefusal } from '../src/prompt.ts'

describe('tool-goal texts', () => {
  it('the goal tools section of the system prompt, with and without a block threshold', () => {
    expect(goalToolsPrompt(3)).toMatchSnapshot('threshold 3')
    expect(goalToolsPrompt(0)).toMatchSnapshot('no threshold')
  })

  it('the check section, one command and several', () => {
    expect(checkPrompt(['npm test'])).toMatchSnapshot('one command')
    expect(checkPrompt(['npm run lint', 'npm test'])).toMatchSnapshot('two commands')
  })

  it('the wrap-up message after the model completes or blocks, and the refusal after it', () => {
    // Only the fields the message reads; a whole GoalState would bury them.
    const complete = { phase: 'complete' } as GoalState
    const blocked = { phase: 'blocked', blockedReason: { code: 'model-reported', message: 'needs the staging password' } } as GoalState
    expect(wrapUpMessage(complete)).toMatchSnapshot('complete')
    expect(wrapUpMessage(blocked)).toMatchSnapshot('blocked')
    expect(wrapUpRefusal('complete')).toMatchSnapshot('refusal')
  })
})
