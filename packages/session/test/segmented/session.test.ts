// The session suite on logs kept in segments of 4 KiB.
import './use-segments.ts'
import '../session.test.ts'
