// vitest globalSetup of the repository: the run's PostgreSQL server and the child-process bundles, started
// side by side (vitest runs the files of its globalSetup list one after the other).
import type { TestProject } from 'vitest/node'
import childBuilds from './child-builds-setup.ts'
import database from './database-setup.ts'

export default async function setup(project: TestProject) {
  const started = await Promise.allSettled([database(project), childBuilds(project)])
  const teardowns = started.flatMap((result) => (result.status === 'fulfilled' && result.value ? [result.value] : []))
  const teardown = async () => {
    for (const result of await Promise.allSettled(teardowns.map((stop) => stop()))) if (result.status === 'rejected') throw result.reason
  }
  const failed = started.find((result) => result.status === 'rejected')
  if (failed) {
    await teardown()
    throw failed.reason
  }
  return teardown
}
