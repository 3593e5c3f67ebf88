package web

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
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

// errLineTooLong is what readLine returns when a line exceeds its budget.
var errLineTooLong = errors.New("line too long")

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
	line, err := readLine(r, MaxRequestLine)
	if err != nil {
		if errors.Is(err, io.EOF) && line == "" {
			return nil, io.EOF
		}
		return nil, requestError("request line", err)
	}
	req, err := parseRequestLine(line)
	if err != nil {
		return nil, err
	}
	if req.Header, err = readHeader(r); err != nil {
		return nil, err
	}
	if !strings.EqualFold(req.Method, "GET") {
		return nil, statusErrorf(501, "method %q is not implemented", req.Method)
	}
	return req, nil
}

// parseRequestLine splits "METHOD URI VERSION" at runs of white space, as
// strings.Fields would, but into an array on the stack: strings.FieldsSeq
// yields the fields one by one, so no slice is allocated per request.
func parseRequestLine(line string) (*Request, error) {
	var f [3]string
	n := 0
	for field := range strings.FieldsSeq(line) {
		if n == len(f) {
			n++ // a fourth field: malformed
			break
		}
		f[n] = field
		n++
	}
	if n != 3 || !strings.HasPrefix(f[2], "HTTP/") {
		return nil, statusErrorf(400, "malformed request line %q", line)
	}
	return &Request{Method: f[0], URI: f[1], Version: f[2]}, nil
}

// readHeader reads header lines up to the empty line, within MaxHeaderBytes
// in all.
func readHeader(r *bufio.Reader) ([]string, error) {
	var header []string
	budget := MaxHeaderBytes
	for {
		line, n, err := readLineCount(r, budget)
		if err != nil {
			return nil, requestError("header", err)
		}
		budget -= n
		if line == "" {
			return header, nil
		}
		if name, _, ok := strings.Cut(line, ":"); !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, statusErrorf(400, "malformed header line %q", line)
		}
		header = append(header, line)
	}
}

// requestError classifies an error met while reading part of a request:
// limits and a request cut short by end-of-file deserve a 400 answer;
// anything else means the connection is gone.
func requestError(part string, err error) error {
	switch {
	case errors.Is(err, errLineTooLong):
		return &StatusError{Code: 400, Msg: part + " too long", Err: err}
	case errors.Is(err, io.EOF):
		return &StatusError{Code: 400, Msg: part + " cut off by end of file", Err: io.ErrUnexpectedEOF}
	default:
		return err
	}
}

// readLine reads one line of at most max bytes, ending included, and returns
// it without its ending ("\n" or "\r\n"). At end-of-file it returns what it
// read and io.EOF.
func readLine(r *bufio.Reader, max int) (string, error) {
	line, _, err := readLineCount(r, max)
	return line, err
}

// readLineCount is readLine that also says how many bytes it consumed.
func readLineCount(r *bufio.Reader, max int) (string, int, error) {
	var long []byte // only for lines longer than r's buffer
	for {
		chunk, err := r.ReadSlice('\n')
		n := len(long) + len(chunk)
		if n > max {
			return "", n, errLineTooLong
		}
		switch {
		case err == nil && long == nil:
			return trimEOL(chunk), n, nil
		case err == nil:
			return trimEOL(append(long, chunk...)), n, nil
		case errors.Is(err, bufio.ErrBufferFull):
			long = append(long, chunk...)
		default:
			return string(append(long, chunk...)), n, err
		}
	}
}

// trimEOL drops the "\n" or "\r\n" at the end of a line.
func trimEOL(b []byte) string {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return string(bytes.TrimSuffix(b, []byte("\r")))
}
