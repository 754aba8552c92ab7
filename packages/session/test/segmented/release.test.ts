// The release suite on logs kept in segments of 1 KiB.
import './use-segments.ts'
import '../release.test.ts'
