import type { SessionRecord } from './records.ts'
import type { RepairReport, Session, SessionService } from './types.ts'

export * from './records.ts'
export * from './types.ts'
export { dispatchIsolated } from './isolated.ts'

declare module 'cordis' {
  interface Context {
    sessions: SessionService
  }
  interface Events {
    'session/event'(session: Session, record: SessionRecord): void
    'session/flush'(session: Session): void | Promise<void>
    /** A session opened for writing needed repair (torn line cut, repair records appended). */
    'session/repaired'(session: Session, report: RepairReport): void
  }
}
