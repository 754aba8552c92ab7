// The contract tests of the checkpoint index (session-jsonl/test/checkpoint-index.test.ts), on the PostgreSQL store.
import './use-postgres.ts'
import '../../../session-jsonl/test/checkpoint-index.test.ts'
