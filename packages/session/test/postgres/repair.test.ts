// The contract tests of repair.test.ts, on the PostgreSQL store.
import './use-postgres.ts'
import '../repair.test.ts'
