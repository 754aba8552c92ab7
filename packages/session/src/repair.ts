import type { CoreRecordData, RecordedToolCall } from './records.ts'

export interface PlannedRecord {
  type: string
  data: unknown
}

export const INTERRUPTED_MESSAGE = 'The tool call was interrupted: the process stopped before it returned a result, so its effects, if any, are unknown.'

interface Step { turn: number; step: number }
interface OpenCall { turn: number; step: number; callId: string }

/**
 * Plans the records that close whatever a session left open at its end (a crash, or a fork's cut):
 * tool calls without results, the open step, the open turn. Also covers the calls of the open step's
 * assistant message that never got a `tool/call` record (the process died while an earlier call of the
 * same step ran): providers refuse a history where a tool call has no result.
 * Tolerant of malformed data, since plugins may write records of these types too.
 */
export function planRepairs(records: readonly PlannedRecord[]): PlannedRecord[] {
  let turn: number | undefined
  let step: Step | undefined
  let assistant: { turn: number; step: number; toolCalls: RecordedToolCall[] } | undefined
  const open = new Map<string, OpenCall>()
  const called = new Set<string>()
  const reset = () => {
    step = undefined
    assistant = undefined
    open.clear()
    called.clear()
  }
  for (const record of records) {
    const data = record.data as any
    switch (record.type) {
      case 'turn/start':
        reset()
        turn = data?.turn
        break
      case 'turn/end':
        reset()
        turn = undefined
        break
      case 'step/start':
        step = { turn: data?.turn, step: data?.step }
        break
      case 'step/end':
        step = undefined
        break
      case 'assistant/message':
        assistant = { turn: data?.turn, step: data?.step, toolCalls: Array.isArray(data?.toolCalls) ? data.toolCalls : [] }
        break
      case 'tool/call':
        called.add(data?.callId)
        open.set(data?.callId, { turn: data?.turn, step: data?.step, callId: data?.callId })
        break
      case 'tool/result':
        open.delete(data?.callId)
        break
    }
  }

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
