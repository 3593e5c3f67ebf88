//go:build unix && !linux

package judge

import "net"

// passCreds is Linux's SO_PASSCRED; elsewhere the judge takes the
// socket's bytes as the subject's.
func passCreds(*net.UnixConn) error { return nil }

func checkWriter([]byte, int) error { return nil }
