// The package rules of CONTRIBUTING.md, checked over the whole repository: declared @goalkeeper/* imports,
// no deep imports, plugins' runtime imports limited to kit and policy, no undeclared import().
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { checkRepository, importsOf, type Violation } from './dependency-check.ts'

const root = path.resolve(fileURLToPath(import.meta.url), '../..')

/**
 * Known breaches, each with why it stays. Matched on package, file prefix, imported package or path, and
 * rule; an entry that no longer matches anything fails the test, so the list only shrinks.
 */
const EXCEPTIONS: { package: string; file: string; specifier: string; rule: Violation['rule']; why: string }[] = [
  {
    package: '@goalkeeper/agent-loop', file: 'packages/agent-loop/test/', specifier: '@goalkeeper/test-kit', rule: 'undeclared',
    why: 'test-kit depends on agent-loop, so declaring it would be a cycle; the tests reach it through the workspace root',
  },
  {
    package: '@goalkeeper/goal', file: 'packages/goal/test/', specifier: '@goalkeeper/test-kit', rule: 'undeclared',
    why: 'test-kit depends on goal (the goal waits, untilGoalStops), so declaring it would be a cycle',
  },
  {
    package: '@goalkeeper/session', file: 'packages/session/test/', specifier: '@goalkeeper/test-kit', rule: 'undeclared',
    why: 'test-kit depends on session (same cycle as agent-loop)',
  },
  {
    package: '@goalkeeper/session', file: 'packages/session/test/', specifier: '@goalkeeper/session-postgres', rule: 'undeclared',
    why: 'the store contract tests run against both stores; each store package depends on session, so declaring them would be a cycle',
  },
  {
    package: '@goalkeeper/session', file: 'packages/session/test/', specifier: '@goalkeeper/session-jsonl', rule: 'undeclared',
    why: 'the same contract tests on the file store (same cycle as session-postgres)',
  },
  {
    package: '@goalkeeper/session-postgres', file: 'packages/session-postgres/test/race.test.ts', specifier: '../../session/test/fixtures/racer.ts', rule: 'deep-import',
    why: 'the cross-process lock race runs the session service in a child (race-child.ts), shared with session-jsonl',
  },
  {
    package: '@goalkeeper/session-jsonl', file: 'packages/session-jsonl/test/lock.test.ts', specifier: '../../session/test/fixtures/racer.ts', rule: 'deep-import',
    why: 'the same race child as session-postgres\'s race test, on the file store',
  },
  {
    package: '@goalkeeper/session-jsonl', file: 'packages/session-jsonl/test/', specifier: '../../session/test/helpers.ts', rule: 'deep-import',
    why: 'the session service\'s contract helpers (temp dirs, the test key, apps per test), run on the file store they exercise',
  },
  {
    package: '@goalkeeper/session-jsonl', file: 'packages/session-jsonl/test/', specifier: '@goalkeeper/test-kit', rule: 'undeclared',
    why: 'test-kit depends on session-jsonl (its sessionStack loads the file store), so declaring it would be a cycle',
  },
  {
    package: '@goalkeeper/workspace-tools', file: 'packages/workspace-tools/test/', specifier: '@goalkeeper/test-kit', rule: 'undeclared',
    why: 'test-kit depends on workspace-tools (the harness loads it), so declaring it would be a cycle',
  },
]

const matches = (e: (typeof EXCEPTIONS)[number], v: Violation) =>
  e.package === v.package && v.file.startsWith(e.file) && e.rule === v.rule && e.specifier === v.specifier

const show = (v: Violation) => `${v.file}:${v.line} ${v.rule}: '${v.specifier}' (${v.detail})`

describe('package dependencies', () => {
  const violations = checkRepository(root)

  it('every @goalkeeper import is declared, none is deep, plugins take only kit and policy at run time', () => {
    const unexcused = violations.filter((v) => !EXCEPTIONS.some((e) => matches(e, v)))
    expect(unexcused.map(show)).toEqual([])
  })

  it('every exception still matches a violation', () => {
    const stale = EXCEPTIONS.filter((e) => !violations.some((v) => matches(e, v)))
    expect(stale.map((e) => `${e.file} ${e.specifier}`)).toEqual([])
  })
})

describe('the dependency check', () => {
  const dirs: string[] = []
  afterAll(async () => {
    for (const dir of dirs) await rm(dir, { recursive: true, force: true })
  })

  /** A repository of its own: `files` maps a repo-relative path to its text. */
  const repo = async (files: Record<string, string>) => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-deps-'))
    dirs.push(dir)
    for (const [file, text] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(dir, file)), { recursive: true })
      await writeFile(path.join(dir, file), text)
    }
    return dir
  }
  const manifest = (name: string, deps: string[] = [], devDeps: string[] = []) => JSON.stringify({
    name,
    exports: { '.': './src/index.ts', './package.json': './package.json' },
    dependencies: Object.fromEntries(deps.map((d) => [d, 'workspace:*'])),
    devDependencies: Object.fromEntries(devDeps.map((d) => [d, 'workspace:*'])),
  })

  it('tells a type-only import from one that brings a value', () => {
    const sites = importsOf('x.ts', [
      `import type { A } from 'a'`,
      `import { type B, type C } from 'b'`,
      `import { type D, e } from 'c'`,
      `import 'd'`,
      `export type { F } from 'e'`,
      `export { g } from 'f'`,
      `const h = await import('g')`,
      `let i: import('h').I`,
    ].join('\n'))
    expect(sites.map((s) => [s.specifier, s.form, s.typeOnly, s.line])).toEqual([
      ['a', 'static', true, 1],
      ['b', 'static', true, 2],
      ['c', 'static', false, 3],
      ['d', 'static', false, 4],
      ['e', 'static', true, 5],
      ['f', 'static', false, 6],
      ['g', 'dynamic', false, 7],
      ['h', 'type-position', true, 8],
    ])
  })

  it('finds each kind of violation and passes the allowed forms', async () => {
    const dir = await repo({
      'packages/a/package.json': manifest('@goalkeeper/a', ['@goalkeeper/b'], ['@goalkeeper/c']),
      'packages/a/src/index.ts': [
        `import { b } from '@goalkeeper/b'`, // declared
        `import { c } from '@goalkeeper/c'`, // only a devDependency: not enough for src
        `import type { D } from '@goalkeeper/d'`, // undeclared, even as a type
        `const lazy = () => import('@goalkeeper/d')`, // undeclared import()
        `import { inner } from '@goalkeeper/b/src/inner.ts'`, // deep
        `import { own } from './own.ts'`, // inside the package
        `import { self } from '@goalkeeper/a'`, // itself
      ].join('\n'),
      'packages/a/test/a.test.ts': [
        `import { c } from '@goalkeeper/c'`, // a devDependency serves a test
        `import { helper } from '../../b/test/helper.ts'`, // reaches into b
        `import { manifest } from '@goalkeeper/b/package.json'`, // exported subpath
      ].join('\n'),
      'packages/b/package.json': manifest('@goalkeeper/b'),
      'packages/c/package.json': manifest('@goalkeeper/c'),
      'packages/d/package.json': manifest('@goalkeeper/d'),
      'plugins/p/package.json': manifest('@goalkeeper/p', ['@goalkeeper/kit', '@goalkeeper/policy', '@goalkeeper/b']),
      'plugins/p/src/index.ts': [
        `import { kit } from '@goalkeeper/kit'`,
        `import { policy } from '@goalkeeper/policy'`,
        `import type { B } from '@goalkeeper/b'`,
        `import { b } from '@goalkeeper/b'`, // runtime import of another package
      ].join('\n'),
    })
    const found = checkRepository(dir).map((v) => [v.file, v.line, v.rule, v.specifier])
    expect(found).toEqual([
      ['packages/a/src/index.ts', 2, 'undeclared', '@goalkeeper/c'],
      ['packages/a/src/index.ts', 3, 'undeclared', '@goalkeeper/d'],
      ['packages/a/src/index.ts', 4, 'undeclared', '@goalkeeper/d'],
      ['packages/a/src/index.ts', 5, 'deep-import', '@goalkeeper/b/src/inner.ts'],
      ['packages/a/test/a.test.ts', 2, 'deep-import', '../../b/test/helper.ts'],
      ['plugins/p/src/index.ts', 4, 'plugin-runtime', '@goalkeeper/b'],
    ])
  })
})
