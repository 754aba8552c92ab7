// submit --until: a goal defined by a condition, through the queue and a worker process, with the scripted
// model as agent and judge (until-script.mjs). The agent never calls update_goal; the judge decides.
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, jsonLines, start } from '@goalkeeper/test-kit'
import { command, listQueue, readSessions, useFleet, worker } from './helpers.ts'

const SCRIPT = fileURLToPath(new URL('./until-script.mjs', import.meta.url))
const fleet = useFleet({ script: SCRIPT, entries: [['goal-judge', '@goalkeeper/goal-judge']] })
const CONDITION = 'result.txt says the work is finished'

const textOf = (message: any): string => (message.content ?? []).map((block: any) => block.text ?? '').join('')

describe('submit --until', () => {
  it('the worker creates the goal with the condition; the judge refuses round 1, its reasons reach round 2, and the goal completes without a complete call', async () => {
    const repo = await fleet.repo('until')
    const submitted = await command(fleet, ['--json', 'submit', '--until', CONDITION, '--repo', repo, '--max-rounds', '3'])
    expect(submitted.code, submitted.stderr).toBe(0)
    const [line] = jsonLines(submitted.stdout)
    expect(line).toMatchObject({ type: 'submitted', objective: CONDITION, until: CONDITION })

    const one = worker(fleet, ['--name', 'w-until'])
    await one.waitFor('stderr', new RegExp(`goal ${line.id} done: `))
    one.child.kill('SIGTERM')
    expect(await one.exit).toBe(0)
    expect(one.stderr()).toContain(`goal ${line.id} done: complete after 2 rounds; complete (judged met by scripted)`)
    expect(one.stderr()).toMatch(/script: round 1\n[\s\S]*script: judge: not-met\n[\s\S]*script: round 2 after a refusal\n[\s\S]*script: judge: met\n/)

    const [job] = (await listQueue(fleet)).filter((item) => item.id === line.id)
    expect(job).toMatchObject({ state: 'done', phase: 'complete', rounds: 2, output: { status: 'complete (judged met by scripted)' } })
    expect(fleet.show(repo, `goalkeeper/${line.session}`, 'result.txt')).toBe('FINISHED\n')

    const { records, integrity } = (await readSessions(fleet, [line.session])).get(line.session)!
    expect(integrity.state).toBe('signed')
    const created = records.find((record) => record.type === 'goal/change')!
    expect(created.data).toMatchObject({ op: 'create', goal: { objective: CONDITION, until: CONDITION } })
    expect(records.filter((record) => record.type === 'goal/judgement').map((record) => [record.data.verdict, record.data.accepted])).toEqual([['not-met', false], ['met', true]])
    expect(records.filter((record) => record.type === 'tool/call' && record.data.name === 'update_goal')).toHaveLength(0)
    const completed = records.find((record) => record.type === 'goal/change' && record.data.op === 'complete')!
    // The completion keeps what it was decided on: the judge's last verdict with the diff's summary and hash.
    expect(completed.data.goal.judgement.last).toMatchObject({ verdict: 'met', reasons: ['result.txt says FINISHED.'], diff: { summary: expect.stringContaining('result.txt'), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } })
    const prompts = records.filter((record) => record.type === 'user/message' && record.data.source?.kind === 'goal').map((record) => textOf(record.data))
    expect(prompts).toHaveLength(2)
    expect(prompts[1]).toContain('result.txt says DRAFT.')
  }, CLI_TIMEOUT)

  it('a worker whose composition loads no judge fails the job with the reason; a blank condition is refused at submit', async () => {
    const repo = await fleet.repo('until-nojudge')
    const blank = await command(fleet, ['submit', 'Write it', '--until', '  ', '--repo', repo])
    expect(blank.code).toBe(64)
    expect(blank.stderr).toMatch(/--until: The condition must be text saying when the goal is done/)

    const plain = path.join(fleet.dir, 'no-judge.yml')
    const yml = await readFile(fleet.yml, 'utf8')
    await writeFile(plain, yml.replace(/- id: goal-judge\n {2}name: '@goalkeeper\/goal-judge'\n/, ''))
    expect(await readFile(plain, 'utf8')).not.toContain('goal-judge')
    const submitted = await command(fleet, ['submit', '--until', CONDITION, '--repo', repo])
    expect(submitted.code, submitted.stderr).toBe(0)
    const id = submitted.stdout.trim()
    const one = start(['--cwd', fleet.dir, '--config', plain, 'worker', '--name', 'w-nojudge'], { env: fleet.env })
    try {
      await one.waitFor('stderr', new RegExp(`goal ${id} failed: `))
    } finally {
      one.child.kill('SIGTERM')
      await one.exit
    }
    expect(one.stderr()).toMatch(new RegExp(`goal ${id} failed: the goal is defined by a condition \\(submit --until\\), but .*no-judge\\.yml does not load the goal-judge plugin`))
    const [job] = (await listQueue(fleet)).filter((item) => item.id === id)
    expect(job.state).toBe('failed')
  }, CLI_TIMEOUT)
})
