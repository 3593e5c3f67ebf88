package web

import (
	"bufio"
)

// Limits on what a client may send before the server gives up on it with 400
// Bad Request. Without them a client could make a worker buffer an endless
// line.
const (
	MaxRequestLine = 8 << 10  // bytes in the request line, line ending included
	MaxHeaderBytes = 64 << 10 // bytes in all header lines, line endings included
)

// Request is a parsed request: its request line and its header lines.
type Request struct {
	Method  string   // as sent; only GET (in any case) gets past ReadRequest
	URI     string   // as sent, still percent-encoded
	Version string   // e.g. "HTTP/1.0"
	Header  []string // header lines in order, without their line endings
}

// ReadRequest reads one request from r: the request line, then header lines up
// to the empty line. Lines may end in "\r\n" or in a bare "\n".
//
// It returns io.EOF if the client closed the connection before sending a byte
// (wrk and browsers open connections they never use; that is not an error
// worth an answer). A malformed request, one over the limits, or one cut off
// by end-of-file is a *StatusError with code 400; a well-formed request with a
// method other than GET is a *StatusError with code 501. Any other error (a
// deadline, a reset) is returned as it is: there is nobody left to answer.
func ReadRequest(r *bufio.Reader) (*Request, error) {
	// TODO(ex 6.1): read the request line with a helper that reads one line
	// with r.ReadSlice('\n') (gathering the pieces while it returns
	// bufio.ErrBufferFull) and fails as soon as the line is longer than its
	// budget; drop the "\n" and an optional "\r" before it. Nothing at all
	// before end-of-file: return io.EOF. Split the line with strings.Fields:
	// three fields and a version starting with "HTTP/", or 400. Then read header
	// lines up to the empty line, all of them (the empty line included) within
	// MaxHeaderBytes; each needs a non-empty name without spaces before a ':'.
	// Limits and end-of-file inside the request are 400; other read errors are
	// returned as they are. Last, a method other than GET (strings.EqualFold)
	// is 501. Build errors with statusErrorf or &StatusError{…}.
	// Checked by TestEx6_1_Parse.
	return nil, notImplemented("6.1", "ReadRequest")
}
