import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { strictConfig } from '@goalkeeper/policy'

const Fields = Schema.object({
  limit: Schema.natural().min(1).default(6),
  soft: Schema.natural().default(2),
})

describe('strictConfig', () => {
  const Config = strictConfig(Fields)

  it('gives every default for a missing or empty config, and keeps the values given', () => {
    expect(Config(undefined)).toEqual({ limit: 6, soft: 2 })
    expect(Config({})).toEqual({ limit: 6, soft: 2 })
    expect(Config({ limit: 3 })).toEqual({ limit: 3, soft: 2 })
  })

  it('rejects an unknown key, naming it and the known ones', () => {
    expect(() => Config({ limt: 3 })).toThrow(/limt.*unknown option \(known options: limit, soft\)/)
  })

  it('refuses a list with a plain message', () => {
    expect(() => Config([] as never)).toThrow('expected an object of options, got an array')
  })

  it('still validates each field, and runs the cross-field check after them', () => {
    expect(() => Config({ limit: 0 })).toThrow(/limit/)
    const Checked = strictConfig(Fields, (config) => {
      if (config.soft >= config.limit) throw new Schema.ValidationError('must be greater than soft', { path: ['limit'] })
    })
    expect(Checked({ limit: 5 })).toEqual({ limit: 5, soft: 2 })
    expect(() => Checked({ limit: 2 })).toThrow(/limit.*must be greater than soft/)
  })
})
