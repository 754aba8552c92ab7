import Schema from 'schemastery'

/**
 * `fields` (a `Schema.object`) as a plugin config that rejects unknown keys, naming the key and the known
 * ones, so a typo does not silently fall back to a default; a list is refused with a plain message
 * (schemastery would print "expected object but got "). `refine` may check the fields against each other
 * and throw a `Schema.ValidationError`. A missing config is fed through as `{}`, so it yields every
 * field's default.
 */
export function strictConfig<S, T>(fields: Schema<S, T>, refine?: (config: T) => void): Schema<S, T> {
  const known = Object.keys(fields.dict ?? {})
  return Schema.transform(Schema.any(), (raw: unknown) => {
    if (Array.isArray(raw)) throw new Schema.ValidationError('expected an object of options, got an array', { path: [] })
    if (raw !== null && typeof raw === 'object') {
      for (const key of Object.keys(raw)) {
        if (!known.includes(key)) throw new Schema.ValidationError(`unknown option (known options: ${known.join(', ')})`, { path: [key] })
      }
    }
    const config = fields(raw as S)
    refine?.(config)
    return config
  }).default({} as T) as unknown as Schema<S, T>
}
