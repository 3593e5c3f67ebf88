// Package discoverytest is the conformance suite of chapter 01: black-box
// checks of a discovery server and of the frame codec and user store it is
// built from. A chapter wires its package in with a few lines:
//
//	var impl = discoverytest.Impl{ReadFrame: discovery.ReadFrame, …}
//	func TestEx1_1_ReadFrame(t *testing.T) { discoverytest.ReadFrame(t, impl) }
//
// Each exported check grades one exercise and can run alone. The checks
// depend only on the protocol (docs/protocols.md §1) and on Impl, never on
// the implementation's internals.
package discoverytest

import (
	"io"
	"log/slog"
	"time"

	"serverlab/tools/given/lab"
	"serverlab/tools/given/users"
	"serverlab/tools/given/wire"
)

// Impl is what a chapter hands to the suite.
type Impl struct {
	// ReadFrame and WriteFrame are the student's codec (exercises 1.1, 1.2);
	// the suite compares them with tools/given/wire.
	ReadFrame  func(io.Reader) (wire.Frame, error)
	WriteFrame func(io.Writer, wire.Frame) error
	// OpenStore opens the user store at path (exercise 1.3), opening the
	// file for appending with open (nil: the store's default, on disk). The
	// suite passes an open whose files fail or count their syncs.
	OpenStore func(path string, open func(path string) (users.AppendFile, error)) (Store, error)
	// ErrTaken is the chapter's ErrTaken, which Register must wrap.
	ErrTaken error
	// NewServer builds a server (exercises 1.4–1.6).
	NewServer func(Config) (lab.Server, error)
}

// Store is the user store of exercise 1.3.
type Store interface {
	Register(users.User) error
	Lookup(name string) (users.User, bool)
	Close() error
}

// Config is what the suite sets when it builds a server.
type Config struct {
	UsersPath string
	Timeout   time.Duration
	Logger    *slog.Logger // nil: the chapter's test logger
	// OpenUsers opens the users file for appending (nil: the store's
	// default). The suite passes one whose syncs are slow.
	OpenUsers func(path string) (users.AppendFile, error)
}
