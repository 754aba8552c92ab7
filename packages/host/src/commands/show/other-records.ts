import { isRecordOf, type SessionRecord } from '@goalkeeper/session'
import { oneLine } from '../render/text.ts'

const ANSWERS: Record<string, string> = { once: 'allowed once', session: 'allowed for the session', deny: 'denied' }

/**
 * The transcript line of a record another package registered (hooks, webhooks, permissions, the fleet, the
 * store's own marks), or undefined for a type this host does not know: that one is shown raw.
 */
export function describeOtherRecord(record: SessionRecord): string[] | undefined {
  if (isRecordOf(record, 'hook/run')) {
    const run = record.data
    const end = run.exitCode !== null ? `exit ${run.exitCode}` : run.signal ? `killed by ${run.signal}` : 'no exit code'
    const decided = run.decisions?.length ? `: ${run.decisions.join(', ')}` : ''
    return [`  hook ${run.event} "${oneLine(run.hook, 60)}": ${run.outcome}${decided} (${end}, ${run.durationMs} ms)${run.problem ? `: ${oneLine(run.problem, 160)}` : ''}`]
  }
  if (isRecordOf(record, 'notify/delivery')) {
    const delivery = record.data
    const answer = delivery.status !== null ? `HTTP ${delivery.status}` : oneLine(delivery.error ?? 'no response', 120)
    return [`  webhook ${delivery.type} to ${delivery.url}: ${delivery.outcome} (try ${delivery.attempt}, ${answer}, ${delivery.durationMs} ms)`]
  }
  if (isRecordOf(record, 'permission/asked')) {
    const asked = record.data
    return [`  permission for ${asked.tool} ${ANSWERS[asked.answer] ?? asked.answer} by ${asked.by}: ${oneLine(asked.why, 160)}`]
  }
  if (isRecordOf(record, 'fleet/claim')) {
    const claim = record.data
    return [`  worker ${claim.worker} took job ${claim.job} (attempt ${claim.attempt}${claim.takeover ? ', taken over from a lost worker' : ''}${claim.phase ? `, goal ${claim.phase}` : ''})`]
  }
  if (isRecordOf(record, 'fleet/push')) {
    const push = record.data
    return [`  worker ${push.worker} pushed round ${push.round} to ${push.branch} (${push.commit.slice(0, 12)})`]
  }
  if (isRecordOf(record, 'fleet/release')) {
    const release = record.data
    return [`  worker ${release.worker} gave job ${release.job} back to the queue (goal ${release.phase} after ${release.rounds} rounds)`]
  }
  if (isRecordOf(record, 'session/full')) {
    return [`!! the log reached its size limit (${record.data.bytes} of ${record.data.maxBytes} bytes): nothing after this was written`]
  }
  if (isRecordOf(record, 'session/truncated')) {
    return [`!! the cut end of the log was accepted as lost (its last record was seq ${record.data.lastSeq}): ${oneLine(record.data.reason, 160)}`]
  }
  if (isRecordOf(record, 'session/checkpoint')) {
    // Its parts repeat what the records before it say (the whole history, say): named, never printed.
    const parts = Object.keys(record.data.parts ?? {}).join(', ') || 'no parts'
    return [`  checkpoint (${record.data.reason === 'compaction' ? 'after a compaction' : 'every checkpointEvery records'}): ${parts}`]
  }
  if (isRecordOf(record, 'session/adopted')) {
    return [`  adopted: the ${record.data.unsignedLines} unsigned lines before this one were signed on a person's word`]
  }
  return undefined
}
