import type { SessionRecord } from '@goalkeeper/session'

/**
 * Structural invariants of an agent's session log; returns the violations (empty when the log is sound).
 * Used by the randomized test after every run.
 */
export function checkLog(records: readonly SessionRecord[]): string[] {
  const problems: string[] = []
  const fail = (record: SessionRecord, why: string) => problems.push(`seq ${record.seq} ${record.type}: ${why}`)
  let turn: number | undefined
  let lastTurn = 0
  let step: number | undefined
  let lastStep = 0
  const openCalls = new Map<string, SessionRecord>()
  const queued = new Map<string, number>()
  const settled = new Map<string, string[]>()
  const settle = (id: string, how: string) => settled.set(id, [...(settled.get(id) ?? []), how])

  records.forEach((record, index) => {
    const data = record.data as any
    if (record.seq !== index) fail(record, `seq should be ${index}`)
    switch (record.type) {
      case 'turn/start':
        if (turn !== undefined) fail(record, `turn ${turn} is still open`)
        if (!(data.turn > lastTurn)) fail(record, `turn ${data.turn} does not follow ${lastTurn}`)
        turn = lastTurn = data.turn
        lastStep = 0
        break
      case 'turn/end':
        if (turn !== data.turn) fail(record, `closes turn ${data.turn} but ${turn} is open`)
        if (step !== undefined) fail(record, `step ${step} is still open`)
        if (openCalls.size) fail(record, `calls without result: ${[...openCalls.keys()].join(', ')}`)
        turn = undefined
        break
      case 'step/start':
        if (turn !== data.turn || step !== undefined || data.step !== lastStep + 1) fail(record, `step ${data.turn}.${data.step} is out of place`)
        step = lastStep = data.step
        break
      case 'step/end':
        if (turn !== data.turn || step !== data.step) fail(record, `closes step ${data.turn}.${data.step} but ${turn}.${step} is open`)
        if (openCalls.size) fail(record, `calls without result: ${[...openCalls.keys()].join(', ')}`)
        step = undefined
        break
      case 'assistant/message':
      case 'tool/call':
      case 'tool/result':
        if (turn !== data.turn || step !== data.step) fail(record, `belongs to ${data.turn}.${data.step} but ${turn}.${step} is open`)
        if (record.type === 'tool/call') {
          if (openCalls.has(data.callId)) fail(record, `call ${data.callId} is already open`)
          openCalls.set(data.callId, record)
        } else if (record.type === 'tool/result') {
          if (!openCalls.delete(data.callId)) fail(record, `result for ${data.callId} without an open call`)
        }
        break
      case 'user/message':
        if (turn === undefined) fail(record, 'outside a turn')
        if (queued.has(data.id)) settle(data.id, 'admitted')
        break
      case 'input/queued':
        if (queued.has(data.message.id)) fail(record, `id ${data.message.id} queued twice`)
        queued.set(data.message.id, record.seq)
        break
      case 'input/rejected':
      case 'input/cancelled':
        if (!queued.has(data.messageId)) fail(record, `unknown message ${data.messageId}`)
        settle(data.messageId, record.type)
        break
    }
  })
  if (turn !== undefined) problems.push(`turn ${turn} never ends`)
  for (const id of queued.keys()) {
    const how = settled.get(id) ?? []
    if (how.length !== 1) problems.push(`input ${id} settled ${how.length} times (${how.join(', ')})`)
  }
  return problems
}
