// The checkpoint-index suite on logs of version 1 (a mac on every line).
import './use-v1.ts'
import '../checkpoint-index.test.ts'
