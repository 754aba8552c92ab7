import type {} from '@goalkeeper/notifier'
import { describeError } from '@goalkeeper/kit'
import { HostError } from '../../errors.ts'
import type { AgentRun } from './agent-run.ts'

/** The variable `--notify` signs with; a composition's endpoints name their own. */
export const NOTIFY_SECRET_ENV = 'GOALKEEPER_WEBHOOK_SECRET'

/** Collects `--notify URL` (repeatable). */
export const collectUrl = (value: string, list: string[] = []): string[] => [...list, value]

/**
 * `--notify URL`: webhooks of this run to each URL, through the composition's notifier. Signed with
 * GOALKEEPER_WEBHOOK_SECRET when it is set; otherwise sent unsigned, and said so, since a receiver that
 * checks signatures would drop them and one that does not should know anyone could send the same.
 */
export function notifyFor(run: AgentRun, urls: readonly string[]): void {
  const notifier = run.app.ctx.get('notifier')
  if (!notifier) {
    throw new HostError('--notify needs the notifier plugin, which this composition does not load', {
      hint: "add `- id: notifier\n  name: '@goalkeeper/notifier'` to cordis.yml",
    })
  }
  const signed = !!process.env[NOTIFY_SECRET_ENV]
  if (!signed) run.term.note(`warning: --notify sends unsigned webhooks; set ${NOTIFY_SECRET_ENV} (whsec_<base64>, or any text) to sign them`)
  for (const url of urls) {
    try {
      notifier.add({ url, ...(signed && { secretEnv: NOTIFY_SECRET_ENV }) })
    } catch (error) {
      throw new HostError(`--notify ${describeError(error)}`, { hint: 'give an http:// or https:// URL' })
    }
  }
}
