// The checkpoint-index suite on logs kept in segments of 1 KiB.
import './use-segments.ts'
import '../checkpoint-index.test.ts'
