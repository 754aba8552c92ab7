// The integrity suite on logs kept in segments of 4 KiB.
import './use-segments.ts'
import '../integrity.test.ts'
