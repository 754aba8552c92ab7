import type { OpenOptions, Session, SessionService, SessionSummary, SummaryFold } from '@goalkeeper/session'

/** Several session stores read as one: the board over several projects and a fleet's database at once. */
export interface Stores {
  readonly dirs: readonly string[]
  list(folds: Readonly<Record<string, SummaryFold>>): Promise<SessionSummary[]>
  /**
   * The `limit` most recent sessions of all the stores (`SessionService.recent` of each, merged), how
   * many there are in all, and whether these are all of them (`complete`).
   */
  recent(limit: number, folds: Readonly<Record<string, SummaryFold>>): Promise<{ sessions: SessionSummary[]; total: number; complete: boolean }>
  /** Opens the session from the first store that has it; `SESSION_NOT_FOUND` when none has. */
  open(id: string, options: OpenOptions): Promise<{ session: Session; close(): Promise<void> }>
}

const notFound = (error: unknown) => (error as { code?: unknown }).code === 'SESSION_NOT_FOUND'

export function storesOf(services: readonly SessionService[]): Stores {
  return {
    dirs: [...new Set(services.flatMap((service) => service.dirs))],
    async list(folds) {
      const lists = await Promise.all(services.map((service) => service.list({ folds })))
      if (lists.length === 1) return lists[0]
      // A session two stores both reach (a project's store also lists older directories) is shown once.
      const seen = new Set<string>()
      return lists.flat().filter((summary) => !seen.has(summary.id) && !!seen.add(summary.id))
    },
    async recent(limit, folds) {
      const results = await Promise.all(services.map((service) => service.recent({ limit, folds })))
      const complete = results.every((result) => result.sessions.length >= result.total)
      const total = results.reduce((sum, result) => sum + result.total, 0)
      if (results.length === 1) return { ...results[0], complete }
      const seen = new Set<string>()
      const sessions = results.flatMap((result) => result.sessions).filter((summary) => !seen.has(summary.id) && !!seen.add(summary.id))
      sessions.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      return { sessions: sessions.slice(0, limit), total, complete: complete && sessions.length <= limit }
    },
    async open(id, options) {
      let last: unknown
      for (const service of services) {
        try {
          // A session open here already (the process that writes it embeds the board) is its writer's to close.
          const held = service.get(id)
          const session = await service.open(id, options)
          return { session, close: async () => void (session === held || (await service.close(session))) }
        } catch (error) {
          if (!notFound(error)) throw error
          last = error
        }
      }
      throw last
    },
  }
}
