// The contract tests of size-limits.test.ts, on the PostgreSQL store.
import './use-postgres.ts'
import '../size-limits.test.ts'
