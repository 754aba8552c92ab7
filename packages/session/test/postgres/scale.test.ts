// The contract tests of scale.test.ts, on the PostgreSQL store.
import './use-postgres.ts'
import '../scale.test.ts'
