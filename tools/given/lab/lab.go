// Package lab holds the few names every chapter of the course shares: the
// sentinel a stub returns, the sentinel a closed server returns, and the face
// every chapter's server has.
//
// It is given code. Chapters import it; they never copy it.
package lab

import (
	"errors"
	"net"
)

// ErrNotImplemented is what every exercise stub returns (wrapped, with the
// exercise id) until the student writes the code. The suites recognise it and
// say "not implemented yet" instead of a confusing protocol failure.
var ErrNotImplemented = errors.New("not implemented")

// ErrServerClosed is returned by Serve after Close, like http.ErrServerClosed:
// it tells the caller that Serve stopped because it was asked to.
var ErrServerClosed = errors.New("server closed")

// Markers that tests/testkit prints at the start of the failures it reports,
// and that tools/cmd/grade reads to state the cause of a lost point. They live
// here, in a package without test dependencies, so both can import them.
const (
	LeakMarker     = "serverlab: leak:"
	WatchdogMarker = "serverlab: watchdog:"
	// SubjectGoneMarker: under tools/cmd/grade, the process that runs the
	// student's code ended while a check was running (tests/judge).
	SubjectGoneMarker = "serverlab: subject gone:"
)

// Server is the face of every server in the course, modelled on net/http.Server:
// Serve runs until Close; Close is idempotent, stops Serve and returns only when
// every goroutine the server started has finished.
type Server interface {
	Serve(ln net.Listener) error
	Close() error
}

// NotImplemented returns an error that wraps ErrNotImplemented and names the
// exercise, e.g. NotImplemented("1.3", "Store.Register").
func NotImplemented(exercise, what string) error {
	return &notImplementedError{exercise: exercise, what: what}
}

type notImplementedError struct{ exercise, what string }

func (e *notImplementedError) Error() string {
	return "ex " + e.exercise + ": " + e.what + ": " + ErrNotImplemented.Error()
}

func (e *notImplementedError) Unwrap() error { return ErrNotImplemented }
