// The contract tests of fork.test.ts, on the PostgreSQL store.
import './use-postgres.ts'
import '../fork.test.ts'
