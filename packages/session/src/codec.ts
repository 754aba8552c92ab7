import { isRecordOf, type SessionHeaderData, type SessionRecord } from './records.ts'

export const HEADER = 'session/header'

/**
 * Serialises one record as a JSONL line (without the newline) and returns the record as it will read
 * back from disk. Keeping that parsed copy in memory, rather than the caller's object, means a later
 * mutation by the caller cannot make memory and file disagree, and `undefined` fields vanish in both.
 */
export function encodeRecord<T>(seq: number, at: number, type: string, data: T): { line: string; record: SessionRecord<T> } {
  let json: string | undefined
  try {
    json = JSON.stringify(data)
  } catch (error) {
    throw new TypeError(`record data of type "${type}" is not JSON-serialisable: ${(error as Error).message}`, { cause: error })
  }
  if (json === undefined) throw new TypeError(`record data of type "${type}" is not JSON-serialisable (undefined, a function or a symbol)`)
  const line = `{"seq":${seq},"at":${at},"type":${JSON.stringify(type)},"data":${json}}`
  const copy = plainCopy(data, 0)
  return { line, record: { seq, at, type, data: (copy === UNUSUAL ? JSON.parse(json) : copy) as T } }
}

const UNUSUAL = Symbol('unusual')
const MAX_DEPTH = 64

/**
 * What `JSON.parse(JSON.stringify(value))` gives, for plain data (strings, finite numbers, booleans,
 * null, plain objects and arrays), copied without the parse, which costs more than the rest of an
 * append together. Anything else (a `toJSON`, a class instance, `undefined` or a function where JSON
 * drops or nulls it, a non-finite number, very deep nesting) gives `UNUSUAL`, and the caller parses.
 */
function plainCopy(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      if (!Number.isFinite(value)) return UNUSUAL
      return value === 0 ? 0 : value
    case 'object': {
      if (value === null) return null
      if (depth >= MAX_DEPTH) return UNUSUAL
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype || 'toJSON' in value) return UNUSUAL
        const copy = new Array(value.length)
        for (let i = 0; i < value.length; i++) {
          const item = plainCopy(value[i], depth + 1)
          if (item === UNUSUAL || item === undefined) return UNUSUAL
          copy[i] = item
        }
        return copy
      }
      const proto = Object.getPrototypeOf(value)
      if ((proto !== Object.prototype && proto !== null) || 'toJSON' in value) return UNUSUAL
      const copy: Record<string, unknown> = {}
      for (const key of Object.keys(value)) {
        // Assigning it would set the copy's prototype, where JSON.parse makes an own property.
        if (key === '__proto__') return UNUSUAL
        const item = plainCopy((value as Record<string, unknown>)[key], depth + 1)
        if (item === UNUSUAL || item === undefined) return UNUSUAL
        copy[key] = item
      }
      return copy
    }
    default:
      return UNUSUAL
  }
}

export interface RecordProblem {
  code: 'SESSION_CORRUPT' | 'SESSION_BAD_SEQ'
  reason: string
}

/**
 * Checks a parsed line against the envelope rules. Reasons never quote record contents: files may hold
 * secrets typed by a user, and these reasons end up in logs.
 */
export function checkRecord(value: any, seq: number, id: string): RecordProblem | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return corrupt('is not a record object')
  if (value.seq !== seq) {
    const got = typeof value.seq === 'number' ? String(value.seq) : `a ${typeof value.seq}`
    return { code: 'SESSION_BAD_SEQ', reason: `has seq ${got} where ${seq} was expected` }
  }
  if (typeof value.at !== 'number' || !Number.isFinite(value.at)) return corrupt('has no valid "at"')
  if (typeof value.type !== 'string' || value.type === '') return corrupt('has no valid "type"')
  if (!('data' in value)) return corrupt('has no "data"')
  if (seq === 0) return value.type === HEADER ? checkHeader(value.data, id) : corrupt(`is not a ${HEADER}`)
  if (value.type === HEADER) return corrupt(`repeats the ${HEADER}`)
}

function checkHeader(data: any, id: string): RecordProblem | undefined {
  if (typeof data !== 'object' || data === null) return corrupt('has header data that is not an object')
  if (data.version !== 1 && data.version !== 2) return corrupt('has an unsupported header version')
  if (data.id !== id) return corrupt('has a header whose id does not match the file name')
  if (typeof data.createdAt !== 'number' || typeof data.cwd !== 'string') return corrupt('has a header without createdAt or cwd')
  const from = data.parent?.from
  if (from !== undefined && !(Number.isSafeInteger(from) && from >= 1)) return corrupt('has a header whose parent.from is not a seq')
}

function corrupt(reason: string): RecordProblem {
  return { code: 'SESSION_CORRUPT', reason }
}

/** The seq of the record after the header: 1, or the parent's checkpoint a fork starts at (`parent.from`). */
export function seqAfterHeader(header: SessionHeaderData): number {
  return header.parent?.from ?? 1
}

/** Record 0 of a session is its header: `create` writes it and the replay refuses a file without one. */
export function headerOf(records: readonly SessionRecord[]): SessionHeaderData {
  const first = records[0]
  if (!first || !isRecordOf(first, HEADER)) throw new Error('session: the log does not start with its header')
  return first.data
}
