// The size-limits suite on logs of version 1 (a mac on every line).
import './use-v1.ts'
import '../size-limits.test.ts'
