import { isRecord } from '@goalkeeper/kit'
import { foldSession, isRecordOf, type Session, type SessionRecord, type SummaryFold, type SummaryFoldRun, type Usage } from '@goalkeeper/session'
import type { ToolDefinition } from '@goalkeeper/tools'
import { argumentsRun, changeOf } from './tool-result.ts'
import { callsOf, costOfCalls, type CostOfUsage, type UsageTotals } from './usage.ts'

/**
 * What a whole session did, as chat's `/cost`, `/diff` and `/resume` tell it: kept while the session is written
 * and carried by every checkpoint (a kept fold that resumes), so a session holding its records from a
 * checkpoint on still counts what came before.
 */
export interface SessionTotals {
  /** Turns ended (`turn/end`). */
  turns: number
  /** Tool calls made (`tool/call`). */
  toolCalls: number
  /** Summed usage reports of model calls (answers and compaction summaries), `calls` of them. */
  usage: Required<Usage> & { calls: number }
  /** Successful calls of edit tools, the files they changed (sorted), and successful calls of command tools. */
  edits: number
  files: string[]
  commands: number
}

const emptyTotals = (): SessionTotals => ({
  turns: 0, toolCalls: 0, usage: { inputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0, outputTokens: 0, reasoningTokens: 0, calls: 0 }, edits: 0, files: [], commands: 0,
})

/** Reads carried totals as they are: a checkpoint is a record of the log, whatever wrote it. */
function totalsOf(state: unknown): SessionTotals {
  const totals = emptyTotals()
  if (!isRecord(state)) return totals
  const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0)
  totals.turns = count(state.turns)
  totals.toolCalls = count(state.toolCalls)
  totals.edits = count(state.edits)
  totals.commands = count(state.commands)
  totals.files = Array.isArray(state.files) ? state.files.filter((file): file is string => typeof file === 'string') : []
  const usage = isRecord(state.usage) ? state.usage : {}
  for (const key of Object.keys(totals.usage) as (keyof SessionTotals['usage'])[]) totals.usage[key] = count(usage[key])
  return totals
}

/**
 * The totals fold; `toolOf` tells which tools edit files and which run commands (the registry of this
 * process). The tools a log names keep their kind, so totals carried from another process agree.
 */
export function sessionTotalsFold(toolOf: (name: string) => ToolDefinition | undefined): SummaryFold<SessionTotals> {
  const run = (from: SessionTotals): SummaryFoldRun<SessionTotals> => {
    const totals = from
    const files = new Set(from.files)
    // Calls waiting for their result: none are left at a checkpoint, which is written between turns.
    const calls = new Map<string, { name: string; arguments: string }>()
    const result = (): SessionTotals => ({ ...totals, usage: { ...totals.usage }, files: [...files].sort() })
    return {
      add(record: SessionRecord) {
        if (isRecordOf(record, 'turn/end')) totals.turns++
        else if (isRecordOf(record, 'assistant/message', 'context/compacted')) {
          const usage = record.data.usage
          if (!usage) return
          totals.usage.calls++
          totals.usage.inputTokens += usage.inputTokens ?? 0
          totals.usage.cachedInputTokens += usage.cachedInputTokens ?? 0
          totals.usage.cacheWriteInputTokens += usage.cacheWriteInputTokens ?? 0
          totals.usage.outputTokens += usage.outputTokens ?? 0
          totals.usage.reasoningTokens += usage.reasoningTokens ?? 0
        } else if (isRecordOf(record, 'tool/call')) {
          totals.toolCalls++
          calls.set(record.data.callId, record.data)
        } else if (isRecordOf(record, 'tool/result')) {
          const call = calls.get(record.data.callId)
          calls.delete(record.data.callId)
          if (!call || !record.data.ok) return
          const tool = toolOf(call.name)
          if (tool?.kind === 'execute') totals.commands++
          if (tool?.kind !== 'edit') return
          totals.edits++
          const diff = changeOf(tool, call, record.data)
          const args = diff ? undefined : argumentsRun(call, record.data)
          files.add(diff ? diff.path : typeof args?.path === 'string' ? args.path : 'a file')
        }
      },
      result,
      state: result,
    }
  }
  return {
    // Bump with any change to what the totals count: a carried state of another version is not resumed.
    version: 'session-totals/1',
    start: () => run(emptyTotals()),
    resume: (state) => run(totalsOf(state)),
  }
}

/** A session's totals, continued from its last checkpoint that carried them, and what is known only as totals. */
export interface HeldTotals {
  totals: SessionTotals
  /** The first seq the totals cover: 0, unless the session holds records from a checkpoint that carried none (one written before totals were). */
  from: number
  /** The records after the checkpoint the totals went on from (all held records when none). */
  since: readonly SessionRecord[]
  /** The seq of that checkpoint, when the totals went on from one. */
  checkpointSeq?: number
  /** The totals carried by that checkpoint. */
  carried?: SessionTotals
}

export function heldTotals(session: Session, toolOf: (name: string) => ToolDefinition | undefined): HeldTotals {
  const held = foldSession(session, sessionTotalsFold(toolOf))
  const since = session.records.slice(held.index)
  return {
    totals: held.result,
    from: held.from,
    since,
    ...(held.resumed !== undefined && { checkpointSeq: since[0]?.seq, carried: totalsOf(held.resumed) }),
  }
}

/** Usage totals as `/cost` prints them, or undefined when no call reported any. */
export function usageTotalsOf(totals: SessionTotals): UsageTotals | undefined {
  const { inputTokens, cachedInputTokens, outputTokens, reasoningTokens, calls } = totals.usage
  return calls ? { inputTokens, cachedInputTokens, outputTokens, reasoningTokens, calls } : undefined
}

/**
 * What the session's model calls cost: each call held priced as it was made, and those before the checkpoint
 * priced as one call of their summed usage: the same for a price per token (a configured one, and most of the
 * bundled table), not for a price that changes with the size of a call (a few models' long-context rates).
 */
export function costOfHeld(held: HeldTotals, price: CostOfUsage | undefined): number | null | undefined {
  const carried = held.carried?.usage
  const calls = [...(carried?.calls ? [carried] : []), ...callsOf(held.since)]
  return costOfCalls(calls, price)
}
