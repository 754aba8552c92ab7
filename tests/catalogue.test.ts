import fs from 'node:fs'
import { describe, expect, it } from 'vitest'
import { designFile, findUses, problems, readCatalogue, readCordisEvents, readSources, renderTables, withTables, type SourceText, type Unresolved } from '../scripts/catalogue.ts'

/**
 * Sites whose event name or record type is a parameter, so the source does not say it: each is allowed
 * here because the compiler checks it instead (the parameter's type comes from the declarations).
 */
const UNRESOLVED: Unresolved[] = [
  { file: 'packages/test-kit/src/harness.ts', within: 'events', kind: 'listen', why: 'the names a test asks for, typed keyof Events' },
  { file: 'packages/session/src/service.ts', within: 'appended', kind: 'append', why: 'repair records, planned as CoreRecordData types by repair.ts' },
  { file: 'packages/fleet/src/goal-runner.ts', within: 'append', kind: 'append', why: 'typed keyof FleetRecordData' },
]

const sources = readSources()
const catalogue = readCatalogue(sources)

describe('the catalogue of records, events and services', () => {

  it('declares every event the code listens to or dispatches, and registers every record type it appends', () => {
    const uses = findUses(sources)
    expect(problems(catalogue, uses, UNRESOLVED)).toEqual([])
    // The scan sees the code base, not an empty set: the loop's dispatches, the driver's listeners, the goal's records.
    const names = (kind: string) => new Set(uses.filter((use) => use.kind === kind).flatMap((use) => use.names ?? []))
    expect([...names('dispatch')]).toEqual(expect.arrayContaining(['agent/turn-end', 'agent/prompt-submit', 'agent/reasoning-delta', 'goal/changed', 'session/event']))
    expect([...names('listen')]).toEqual(expect.arrayContaining(['agent/prompt-submit', 'agent/reasoning-delta', 'goal/auto-resume', 'tool/before-call']))
    expect([...names('append')]).toEqual(expect.arrayContaining(['turn/end', 'goal/change', 'goal/usage', 'goal/check', 'permission/asked', 'session/truncated']))
    expect(catalogue.records.map((entry) => entry.name)).toEqual(expect.arrayContaining(['fleet/claim', 'fleet/push', 'fleet/release', 'goal/change', 'permission/asked', 'turn/end']))
  })

  it('flags an undeclared event, an unregistered record type and a name it cannot read, and nothing else', () => {
    const declarations: SourceText = {
      file: 'packages/sample/src/types.ts',
      pkg: 'sample',
      text: `
        export const KEPT = 'sample/kept'
        export const LOST = 'sample/lost'
        interface SampleRecords { 'sample/inherited': { n: number } }
        declare module 'cordis' {
          interface Context { sample: { n: number } }
          interface Events { 'sample/known'(n: number): void }
        }
        declare module '@goalkeeper/session' {
          interface RecordData extends SampleRecords { 'sample/kept': { n: number } }
        }`,
    }
    const code: SourceText = {
      file: 'packages/sample/src/index.ts',
      pkg: 'sample',
      text: `
        import { KEPT, LOST } from './types.ts'
        const EVENT = 'sample/const'
        const NAMES = ['sample/known', 'sample/looped']
        export const apply = (ctx: any, session: any, agent: any, process: any, child: any) => {
          ctx.on('sample/known', () => {})
          ctx.on('internal/service', () => {})
          ctx.on('sample/unknown', () => {})
          ;(ctx as any).on('sample/hidden', () => {})
          this.ctx.emit('sample/emitted', 1)
          root.once(
            // a comment between the parts of a call
            'sample/once', () => {},
          )
          dispatchIsolated(this.host.ctx, 'sample/isolated', 1)
          ctx.parallel(EVENT)
          ctx.waterfall(Math.random() ? 'sample/known' : 'sample/either', 1, () => {})
          for (const name of NAMES) ctx.on(name, () => {})
          session.append(KEPT, { n: 1 })
          session.append('sample/inherited', { n: 1 })
          agent.session.append(LOST, {})
          this.agent.session.append(\`sample/template\`, {})
          process.on('exit', () => {})
          child.once('close', () => {})
          ctx.logger.info('sample/not-an-event')
        }
        function listen(ctx: any, name: string) {
          ctx.on(name, () => {})
        }`,
    }
    const found = problems(readCatalogue([declarations, code], readCordisEvents()), findUses([declarations, code]), [
      { file: 'packages/sample/src/gone.ts', within: 'apply', kind: 'listen', why: 'a site that was removed' },
    ])
    expect(found).toEqual([
      "packages/sample/src/index.ts:8 ctx.on: listens to 'sample/unknown', an event no `declare module 'cordis'` Events block declares",
      "packages/sample/src/index.ts:9 ctx.on: listens to 'sample/hidden', an event no `declare module 'cordis'` Events block declares",
      "packages/sample/src/index.ts:10 ctx.emit: dispatches 'sample/emitted', an event no `declare module 'cordis'` Events block declares",
      "packages/sample/src/index.ts:11 root.once: listens to 'sample/once', an event no `declare module 'cordis'` Events block declares",
      "packages/sample/src/index.ts:15 dispatchIsolated: dispatches 'sample/isolated', an event no `declare module 'cordis'` Events block declares",
      "packages/sample/src/index.ts:16 ctx.parallel: dispatches 'sample/const', an event no `declare module 'cordis'` Events block declares",
      "packages/sample/src/index.ts:17 ctx.waterfall: dispatches 'sample/either', an event no `declare module 'cordis'` Events block declares",
      "packages/sample/src/index.ts:18 ctx.on: listens to 'sample/looped', an event no `declare module 'cordis'` Events block declares",
      "packages/sample/src/index.ts:21 session.append: appends 'sample/lost', a record type no RecordData declaration registers",
      "packages/sample/src/index.ts:22 session.append: appends 'sample/template', a record type no RecordData declaration registers",
      'packages/sample/src/index.ts:28 ctx.on: the event name cannot be read from the source (in listen); use a literal or a const',
      'allowed unresolved site packages/sample/src/gone.ts (apply, listen) no longer exists: remove it from the allowance',
    ])
  })

  it('flags a record type or event declared by two packages', () => {
    const twice = (pkg: string): SourceText => ({
      file: `packages/${pkg}/src/types.ts`,
      pkg,
      text: `declare module '@goalkeeper/session' { interface RecordData { 'shared/record': number } }
             declare module 'cordis' { interface Events { 'shared/event'(): void } }`,
    })
    expect(problems(readCatalogue([twice('a'), twice('b')], readCordisEvents()), [])).toEqual([
      "record type 'shared/record' is declared twice: packages/a/src/types.ts and packages/b/src/types.ts",
      "event 'shared/event' is declared twice: packages/a/src/types.ts and packages/b/src/types.ts",
    ])
  })

  it('the tables of docs/DESIGN.md are what the declarations give (otherwise run `npm run catalogue`)', () => {
    const design = fs.readFileSync(designFile(), 'utf8')
    expect(design, 'docs/DESIGN.md is out of date: run `npm run catalogue`').toBe(withTables(design, renderTables(catalogue)))
    const tables = renderTables(catalogue)
    // A declaration added or removed without running the script is caught.
    expect(withTables(design, renderTables({ ...catalogue, records: catalogue.records.slice(1) }))).not.toBe(design)
    expect(tables).toContain('| `goal/change` | `GoalChangeData` | goal |')
    expect(tables).toContain('| `ctx.sessions` | `SessionService` | session |')
  })
})
