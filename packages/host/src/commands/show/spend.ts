import { formatBudgetUsd, formatDuration, tokensOf, type Goal, type GoalCheckRecord, type GoalUsage } from '@goalkeeper/goal'
import type { Usage } from '@goalkeeper/session'
import { excerpt, keepStart, oneLine } from '../render/text.ts'

/** Dollars rounded to the cent: a transcript is read for what a run cost, not for a cheap model's fourth digit. */
export function formatCents(usd: number | null): string {
  if (usd === null) return 'unknown'
  return `$${(Math.round(usd * 100) / 100).toFixed(2)}`
}

/** 12,345: exact, with thousands marked, as a person checks a bill. */
const count = (value: number) => value.toLocaleString('en-US')

interface Spend {
  calls: number
  tokens: number
  /** null once a call's price was unknown; undefined while no call was priced (a turn outside a goal). */
  costUsd?: number | null
}

/**
 * The tokens and cost of a session's turns, from its records: tokens from every model answer's usage by the
 * one token rule (`tokensOf`: input - cached input + output, as goal budgets count them), cost from the
 * `goal/usage` records (only a goal round's calls are priced).
 */
export class SpendTally {
  private turns = new Map<number, Spend>()
  private total: Spend = { calls: 0, tokens: 0 }

  answer(turn: number, usage: Usage | undefined): void {
    if (!usage) return
    for (const spend of [this.of(turn), this.total]) {
      spend.calls++
      spend.tokens += tokensOf(usage)
    }
  }

  priced(usage: GoalUsage): void {
    for (const spend of [this.of(usage.turn), this.total]) {
      spend.costUsd = spend.costUsd === null || usage.costUsd === null ? null : (spend.costUsd ?? 0) + usage.costUsd
    }
  }

  /** `2 model calls, 1,234 tokens, $0.01`, or undefined for a turn without a usage report. */
  turn(turn: number): string | undefined {
    const spend = this.turns.get(turn)
    return spend?.calls ? describe(spend) : undefined
  }

  /** The closing line: the whole session's calls, tokens and cost, and the token rule they follow. */
  summary(): string | undefined {
    if (!this.total.calls) return undefined
    return `total: ${describe(this.total)} (tokens are input - cached input + output, as goal budgets count them${this.total.costUsd === undefined ? '' : '; cost of goal rounds'})`
  }

  private of(turn: number): Spend {
    let spend = this.turns.get(turn)
    if (!spend) this.turns.set(turn, spend = { calls: 0, tokens: 0 })
    return spend
  }
}

function describe(spend: Spend): string {
  const parts = [`${spend.calls} model ${spend.calls === 1 ? 'call' : 'calls'}`, `${count(spend.tokens)} tokens`]
  if (spend.costUsd !== undefined) parts.push(formatCents(spend.costUsd))
  return parts.join(', ')
}

/**
 * A run of the goal's check: the command, how it ended, and (when it failed, or with --full) its output's
 * tail. With a `width`, a long command is shortened so that how it ended still fits.
 */
export function describeCheck(check: GoalCheckRecord, full: boolean, width?: number): string[] {
  const end = check.exitCode === null ? 'no exit code: timed out or stopped' : `exit code ${check.exitCode}`
  const command = width === undefined ? check.command : oneLine(check.command, Infinity)
  const lines = [keepStart('  check `', command, `\` ${check.ok ? 'passed' : 'failed'} (${end})`, width)]
  if (full || !check.ok) {
    const body = full ? check.output : excerpt(check.output, 6, 400)
    lines.push(...body.split('\n').filter(Boolean).map((line) => `       ${line}`.trimEnd()))
  }
  return lines
}

/**
 * `goal spent: tokens 1,000 of 600, cost $0.00 of $2.50, rounds 2 of 5`, or undefined before any spend or
 * budget. A budget is shown as it was given ($0.005 stays), the spend to the cent.
 */
export function describeGoalSpend(goal: Goal): string | undefined {
  const budgets = goal.budgets ?? {}
  const spent = goal.spent
  if (!spent && !goal.budgets) return undefined
  const of = (used: string, limit: string | undefined) => (limit === undefined ? used : `${used} of ${limit}`)
  const parts = [
    `tokens ${of(count(spent?.tokens ?? 0), budgets.tokens === undefined ? undefined : count(budgets.tokens))}`,
    `cost ${of(formatCents(spent ? spent.costUsd : 0), budgets.costUsd === undefined ? undefined : formatBudgetUsd(budgets.costUsd))}`,
  ]
  if (budgets.activeTimeMs !== undefined || spent?.activeTimeMs) parts.push(`time ${of(formatDuration(spent?.activeTimeMs ?? 0), budgets.activeTimeMs === undefined ? undefined : formatDuration(budgets.activeTimeMs))}`)
  parts.push(`rounds ${goal.roundsStarted} of ${goal.maxGoalRounds}`)
  return `goal spent: ${parts.join(', ')}`
}
