/** What no-progress stops for. */
export type IdleKind =
  /** `rounds` goal rounds in a row changed nothing and ended with text only or an empty reply. */
  | 'idle-rounds'
  /** `monologue` replies in a row within a turn had no tool call and the same (or nearly the same, or empty) text. */
  | 'monologue'
  /** Steps in a row within a turn said the same (or nearly the same) thing while `echo` of their calls found nothing (failures, empty results). */
  | 'echo'

/** One goal round that changed nothing, as the messages describe it. */
export interface IdleRound {
  round: number
  /** Tool calls the round made (none of them progress). */
  calls: number
  /** The round's last reply, trimmed; '' for an empty reply. */
  text: string
  /** The round ended at the agent loop's step limit (still calling tools), not with a reply. */
  stepLimit?: boolean
  /** The last round allowed, stopped as it redid calls every idle round before it made (same arguments, same result). */
  redone?: boolean
}

export interface IdleFinding {
  kind: IdleKind
  level: 'hint' | 'stop'
  /** idle-rounds: the rounds counted, oldest first. */
  rounds: IdleRound[]
  /** monologue: the replies counted, oldest first (trimmed; '' for an empty one); echo: the latest step's text. */
  replies: string[]
  /** echo: the steps and the tool calls counted. */
  steps?: number
  calls?: number
}
