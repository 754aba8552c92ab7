// The contract tests of list.test.ts, on the PostgreSQL store.
import './use-postgres.ts'
import '../list.test.ts'
