// The contract tests of records.test.ts, on the PostgreSQL store.
import './use-postgres.ts'
import '../records.test.ts'
