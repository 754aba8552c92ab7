import { createHmac, randomUUID } from 'node:crypto'

/** The prefix of a secret written the Standard Webhooks way: the key's bytes in base64 behind it. */
const WHSEC = 'whsec_'

/**
 * The HMAC key of a secret: `whsec_<base64>` is decoded (the form Standard Webhooks libraries hand out),
 * anything else is used as its UTF-8 bytes, so a passphrase works too.
 */
export function signingKey(secret: string): Buffer {
  if (secret.startsWith(WHSEC)) {
    const encoded = secret.slice(WHSEC.length)
    // Node's base64 decoder skips what is not base64; a key that does not round-trip is a typo, not a key.
    const key = Buffer.from(encoded, 'base64')
    if (key.length && key.toString('base64').replace(/=+$/, '') === encoded.replace(/=+$/, '')) return key
    throw new Error('the webhook secret starts with whsec_ but the rest is not base64')
  }
  return Buffer.from(secret, 'utf8')
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`: the value of `webhook-signature`. */
export function sign(key: Buffer, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/** A new `webhook-id`: one per event, kept across its retries, so a receiver can drop repeats. */
export const newMessageId = (): string => `msg_${randomUUID().replaceAll('-', '')}`
