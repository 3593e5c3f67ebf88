//go:build !unix

package jobserver

// writeNow is send's fast path on Unix (writenow_unix.go). Elsewhere every
// answer goes through the outbox and the writer goroutine.
func (c *clientConn) writeNow(p []byte) int { return 0 }
