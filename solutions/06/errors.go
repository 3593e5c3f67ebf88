package web

import (
	"errors"
	"fmt"
	"html"
	"io"
	"strconv"
)

// StatusError is an error the client hears about: an HTTP status code and a
// short explanation that goes into the error page.
type StatusError struct {
	Code int    // 400, 403, 404, 501, …
	Msg  string // what went wrong, for the page and the log
	Err  error  // the cause, if any
}

func (e *StatusError) Error() string {
	s := strconv.Itoa(e.Code) + " " + reason(e.Code) + ": " + e.Msg
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *StatusError) Unwrap() error { return e.Err }

// statusErrorf builds a *StatusError with a formatted message.
func statusErrorf(code int, format string, args ...any) *StatusError {
	return &StatusError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// StatusCode is the status an error deserves: the code of a *StatusError in
// its chain, 0 for nil, and 500 for anything else.
func StatusCode(err error) int {
	var se *StatusError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &se):
		return se.Code
	default:
		return 500
	}
}

// reason is the reason phrase of a status line, spelled as the original server
// spells it.
func reason(code int) string {
	switch code {
	case 200:
		return "OK"
	case 400:
		return "Bad Request"
	case 403:
		return "Forbidden"
	case 404:
		return "Not found"
	case 408:
		return "Request Timeout"
	case 501:
		return "Not Implemented"
	default:
		return "Internal Server Error"
	}
}

// writeError writes the error response for err (docs/protocols.md §4): a status line,
// Content-Type and Content-Length, and a short HTML page naming the problem.
func writeError(w io.Writer, err error) error {
	code := StatusCode(err)
	msg := err.Error()
	var se *StatusError
	if errors.As(err, &se) {
		msg = se.Msg
	}
	body := fmt.Sprintf("<!doctype html>\r\n<head><title>OSTEP WebServer Error</title></head>\r\n"+
		"<body>\r\n<h2>%d: %s</h2>\r\n<p>%s</p>\r\n</body>\r\n</html>\r\n",
		code, reason(code), html.EscapeString(msg))
	resp := fmt.Sprintf("HTTP/1.0 %d %s\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s",
		code, reason(code), len(body), body)
	_, werr := io.WriteString(w, resp)
	return werr
}
