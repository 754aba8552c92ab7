// Workspace path confinement: what the descriptor walk (packages/workspace-tools/src/walk.ts) adds to
// each file tool call, next to the check alone (`resolveInside`, which was all a call did before the
// walk), measured in the same run. Run alone: node --import tsx bench/path-walk.bench.ts
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { resolveInside } from '../packages/workspace-tools/src/paths.ts'
import { atTarget, openDirectory } from '../packages/workspace-tools/src/walk.ts'
import { openRegularFile } from '../packages/workspace-tools/src/checked-io.ts'
import { descriptorPaths } from '../packages/workspace-tools/src/proc-fd.ts'

// Many short alternating rounds: on a shared machine the load shifts within seconds, and both sides
// should see the same mix of it.
const ROUNDS = 31
const CALLS = 200

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

interface Cost { wall: number; cpu: number }

/**
 * Microseconds per call of `call`, over CALLS sequential calls: elapsed, and CPU time of the whole
 * process (the main thread and the thread pool that runs the fs calls), which other load on the
 * machine disturbs much less than elapsed time.
 */
async function perCall(call: () => Promise<unknown>): Promise<Cost> {
  const start = process.hrtime.bigint()
  const cpu = process.cpuUsage()
  for (let i = 0; i < CALLS; i++) await call()
  const used = process.cpuUsage(cpu)
  return { wall: Number(process.hrtime.bigint() - start) / 1e3 / CALLS, cpu: (used.user + used.system) / CALLS }
}

async function compare(label: string, before: () => Promise<unknown>, after: () => Promise<unknown>) {
  await perCall(before)
  await perCall(after) // warm-up: JIT and the dentry cache should favour neither side
  const befores: Cost[] = []
  const afters: Cost[] = []
  for (let round = 0; round < ROUNDS; round++) {
    befores.push(await perCall(before))
    afters.push(await perCall(after))
  }
  const side = (costs: Cost[]) => ({ wall: median(costs.map((c) => c.wall)), cpu: median(costs.map((c) => c.cpu)) })
  const row = { label, before: side(befores), after: side(afters) }
  const figure = (key: keyof Cost) => `${row.before[key].toFixed(0).padStart(5)} -> ${row.after[key].toFixed(0).padStart(5)} us (${(row.after[key] / row.before[key]).toFixed(2)}x)`
  console.log(`${label.padEnd(40)} cpu ${figure('cpu')}   elapsed ${figure('wall')}`)
  return row
}

/** Reads a small file the way read_file did before the walk (by its checked real path) or does now. */
async function readBefore(root: string, input: string) {
  const target = await resolveInside(root, input)
  const { handle } = await openRegularFile(target.real, target.shown, 'read')
  try {
    return await handle.readFile()
  } finally {
    await handle.close()
  }
}

async function readAfter(root: string, input: string) {
  const target = await resolveInside(root, input)
  const { handle } = await atTarget(target, (where) => openRegularFile(where, target.shown, 'read'))
  try {
    return await handle.readFile()
  } finally {
    await handle.close()
  }
}

export async function run() {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'gk-bench-')))
  try {
    const shallow = 'f.txt'
    const deep = 'a/b/c/d/e/f/g/f.txt'
    await fs.mkdir(path.join(dir, path.dirname(deep)), { recursive: true })
    for (const file of [shallow, deep]) await fs.writeFile(path.join(dir, file), 'hello\n')

    console.log(`path walk: check only -> check + walk, per call (median of ${ROUNDS} alternating rounds of ${CALLS} calls; descriptor paths: ${descriptorPaths() ? 'yes' : 'no, fallback'})`)
    const rows = [
      await compare('resolve a file in the root', () => resolveInside(dir, shallow), async () => {
        await atTarget(await resolveInside(dir, shallow), async () => undefined)
      }),
      await compare('resolve a file 7 directories down', () => resolveInside(dir, deep), async () => {
        await atTarget(await resolveInside(dir, deep), async () => undefined)
      }),
      await compare('resolve a directory 7 down (list_dir)', () => resolveInside(dir, path.dirname(deep)), async () => {
        await (await openDirectory(await resolveInside(dir, path.dirname(deep)), 'not a directory')).close()
      }),
      await compare('read a small file in the root', () => readBefore(dir, shallow), () => readAfter(dir, shallow)),
      await compare('read a small file 7 directories down', () => readBefore(dir, deep), () => readAfter(dir, deep)),
    ]
    return rows
  } finally {
    await fs.rm(dir, { recursive: true, force: true })
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
