//go:build !linux

package web

import "io"

// writeHeadMore writes a response header that the body will follow. MSG_MORE
// (static_linux.go) is Linux's; here it is a plain Write.
func writeHeadMore(w io.Writer, head []byte) error {
	_, err := w.Write(head)
	return err
}
