import { isRecordOf, type CoreRecordData, type RecordedToolCall } from './records.ts'

export interface PlannedRecord {
  type: string
  data: unknown
}

const INTERRUPTED_MESSAGE = 'The tool call was interrupted: the process stopped before it returned a result, so its effects, if any, are unknown.'

interface Step { turn: number; step: number }
interface OpenCall { turn: number; step: number; callId: string }

/**
 * Plans the records that close whatever a session left open at its end (a crash, or a fork's cut):
 * tool calls without results, the open step, the open turn. Also covers the calls of the open step's
 * assistant message that never got a `tool/call` record (the process died while an earlier call of the
 * same step ran): providers refuse a history where a tool call has no result.
 * Tolerant of malformed data (hence the optional chaining on typed data), since plugins may write records of
 * these types too, and a session must still open.
 */
export function planRepairs(records: readonly PlannedRecord[]): PlannedRecord[] {
  const planner = new RepairPlanner()
  for (const record of records) planner.add(record)
  return planner.plan()
}

/** `planRepairs` record by record, so that replay plans while it streams instead of walking the records again. */
export class RepairPlanner {
  private turn: number | undefined
  private step: Step | undefined
  private assistant: { turn: number; step: number; toolCalls: RecordedToolCall[] } | undefined
  private open = new Map<string, OpenCall>()
  private called = new Set<string>()

  private reset() {
    this.step = undefined
    this.assistant = undefined
    this.open.clear()
    this.called.clear()
  }

  add(record: PlannedRecord) {
    if (isRecordOf(record, 'turn/start')) {
      this.reset()
      this.turn = record.data?.turn
    } else if (isRecordOf(record, 'turn/end')) {
      this.reset()
      this.turn = undefined
    } else if (isRecordOf(record, 'step/start')) {
      this.step = { turn: record.data?.turn, step: record.data?.step }
    } else if (isRecordOf(record, 'step/end')) {
      this.step = undefined
    } else if (isRecordOf(record, 'assistant/message')) {
      const data = record.data
      this.assistant = { turn: data?.turn, step: data?.step, toolCalls: Array.isArray(data?.toolCalls) ? data.toolCalls : [] }
    } else if (isRecordOf(record, 'tool/call')) {
      const data = record.data
      this.called.add(data?.callId)
      this.open.set(data?.callId, { turn: data?.turn, step: data?.step, callId: data?.callId })
    } else if (isRecordOf(record, 'tool/result')) {
      this.open.delete(record.data?.callId)
    }
  }

  /** The records that close what the records added so far left open. */
  plan(): PlannedRecord[] {
    const { turn, step, assistant } = this
    const open = new Map(this.open)
    const called = this.called
    const planned: PlannedRecord[] = []
    const result = (call: OpenCall): PlannedRecord => ({
      type: 'tool/result',
      data: {
        turn: call.turn,
        step: call.step,
        callId: call.callId,
        ok: false,
        content: INTERRUPTED_MESSAGE,
        error: { code: 'INTERRUPTED', message: INTERRUPTED_MESSAGE },
      } satisfies CoreRecordData['tool/result'],
    })
    // Results follow the model's call order where the assistant message gives it.
    if (assistant && step && assistant.turn === step.turn && assistant.step === step.step) {
      for (const call of assistant.toolCalls) {
        if (typeof call?.id !== 'string') continue
        const pending = open.get(call.id)
        if (pending) {
          planned.push(result(pending))
          open.delete(call.id)
        } else if (!called.has(call.id)) {
          const data = { turn: assistant.turn, step: assistant.step, callId: call.id, name: call.name, arguments: call.arguments }
          planned.push({ type: 'tool/call', data: data satisfies CoreRecordData['tool/call'] }, result(data))
        }
      }
    }
    for (const call of open.values()) planned.push(result(call))
    if (step) planned.push({ type: 'step/end', data: { turn: step.turn, step: step.step } satisfies CoreRecordData['step/end'] })
    if (turn !== undefined) planned.push({ type: 'turn/end', data: { turn, outcome: { kind: 'interrupted' } } satisfies CoreRecordData['turn/end'] })
    return planned
  }
}
