import { describe, expect, it } from 'vitest'
import { appsPerTest, tempDir } from '../../session/test/helpers.ts'

const launch = appsPerTest()
const tick = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('the seal', () => {
  it('names the last line a flush wrote, not one appended while that write was under way', async () => {
    const dir = await tempDir()
    const app = await launch(dir)
    const ids: string[] = []
    // One line appended a few turns of the event loop into a flush: at some count it lands while the flush's
    // write is under way, and is written by the next flush. The seal each flush leaves must still match the log.
    for (let ticks = 0; ticks < 96; ticks++) {
      const session = await app.sessions.create({ cwd: dir })
      ids.push(session.id)
      for (let i = 0; i < 5; i++) session.append('test/item', { i })
      const flushing = app.sessions.flush(session)
      for (let t = 0; t < ticks % 12; t++) await tick()
      session.append('test/item', { late: ticks })
      await flushing
      await app.sessions.flush(session)
      await app.sessions.close(session)
    }
    for (const id of ids) {
      const session = await app.sessions.open(id)
      expect(session.integrity, id).toMatchObject({ state: 'signed' })
      expect(session.records.at(-1)?.type).toBe('test/item')
      await app.sessions.close(session)
    }
  })
})
