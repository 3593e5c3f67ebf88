package guard

import (
	"io"
	"net"
	"time"
)

// How long, and how much, Linger reads and discards of what a client still
// sends (chapter 03's and net/http's numbers for the same problem). Both
// bound what a client that floods after its last answer can cost: one
// goroutine and one descriptor for at most LingerTimeout, no memory.
const (
	LingerTimeout = 500 * time.Millisecond
	LingerBytes   = 256 << 10
)

// MaxLingering is how many connections may linger at once, in the whole
// process; past it Linger returns at once and the connection is closed as
// it is. A lingering connection has left its server's Gate, so without this
// bound a flood of clients refused one after another could hold a
// descriptor each for LingerTimeout past the connection caps.
const MaxLingering = 512

var lingering = make(chan struct{}, MaxLingering)

// Linger is the end of a connection whose last words (Frame too large.,
// Server busy., Too many failed logins…) have been written: it half-closes
// nc, so that the client reads them and then the end of the stream, waits
// for the connection's reader to stop (readerDone), and reads and discards
// what the client still sends, until it closes its side, LingerBytes or
// LingerTimeout, whichever comes first. The caller closes nc afterwards. A
// nil readerDone says that nobody reads nc (a connection refused before
// its reader started).
//
// Why: a server that refuses a client stops reading it, and closing a
// socket with bytes unread makes the kernel send a reset instead of the end
// of the stream; a reset destroys every answer the client has not read yet
// (a client that sent a 1 MiB + 1 frame read a reset, 20 times in 20). The
// drain comes after the reader has stopped, because the reader sets read
// deadlines of its own that would undo Linger's. A connection that cannot
// be half-closed (not TCP, or TLS before its handshake) is left to be
// closed at once.
func Linger(nc net.Conn, readerDone <-chan struct{}) {
	select {
	case lingering <- struct{}{}:
		defer func() { <-lingering }()
	default:
		return // MaxLingering linger already
	}
	cw, ok := nc.(interface{ CloseWrite() error })
	if !ok || cw.CloseWrite() != nil {
		return
	}
	deadline := time.Now().Add(LingerTimeout)
	if readerDone != nil {
		wait := time.NewTimer(LingerTimeout)
		defer wait.Stop()
		select {
		case <-readerDone:
		case <-wait.C:
			return // the reader still reads: closing is what ends it
		}
	}
	nc.SetReadDeadline(deadline)
	io.Copy(io.Discard, io.LimitReader(nc, LingerBytes))
}
