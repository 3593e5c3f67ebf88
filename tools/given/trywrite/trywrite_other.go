//go:build !unix

package trywrite

import "net"

// rawConn has no fast path here: every answer goes through the writer.
type rawConn any

func rawOf(net.Conn) rawConn        { return nil }
func writeOnce(rawConn, []byte) int { return 0 }
