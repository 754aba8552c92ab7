// The contract tests of read.test.ts, on logs of version 1.
import './use-v1.ts'
import '../read.test.ts'
