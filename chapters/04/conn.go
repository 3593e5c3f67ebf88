package stock

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"time"

	"serverlab/tools/given/stockfile"
	"serverlab/tools/given/stockproto"
)

// maxLine bounds a request line, as the original's MAXLINE did. A longer
// line is no request of this protocol; the connection is closed.
const maxLine = stockproto.RecordSize

// maxBatch bounds the replies gathered before a write: a client that
// pipelines thousands of requests cannot make the server hold megabytes.
const maxBatch = 8 * stockproto.RecordSize

// session is the state of one connection, which it keeps while it waits
// and while a worker serves it: buffers reused for every request.
type session struct {
	conn   net.Conn
	r      *bufio.Reader
	out    []byte            // replies not yet written
	stocks []stockfile.Stock // scratch for show
	// The connection's deadlines as last set. Setting one re-arms a runtime
	// timer, so they are moved only when they come near (see rearm).
	readBy, writeBy time.Time
}

// serveBatch runs, in order, every request whose whole line is buffered, and
// writes their replies. It reports whether the connection goes on: false
// after exit, once the server is closing, or when a write fails. It never
// waits for the client to send (only for it to take replies, bounded by
// WriteTimeout): the waiting room does that (awaitRequest).
//
// Replies to pipelined requests (several lines in one write) are gathered and
// written together once no further request is complete in the buffer (or
// maxBatch is reached): one write per batch instead of one per request.
func (s *Server) serveBatch(ss *session) (more bool) {
	// TODO(ex 4.2): Done when: every request line buffered in ss.r (whole
	// lines only: lineBuffered) is run in order and answered with one record,
	// the replies of pipelined lines batched: the batch is written when no
	// whole line is left, and whenever it reaches maxBatch; after exit, or once
	// the server is closing, the batch is written and the connection ends
	// (false), as it does when a write fails. Nothing here waits for the
	// client to send. Checked by TestEx4_2_Commands.
	s.log.Error("serveBatch is not implemented yet (ex 4.2)", "remote", ss.conn.RemoteAddr())
	return false
}

// lineBuffered reports whether a whole request line is waiting in r, so that
// reading it does not block.
func lineBuffered(r *bufio.Reader) bool {
	b, _ := r.Peek(r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// readFailed logs why a connection's requests ended, when it is worth saying.
func (s *Server) readFailed(ss *session, err error) {
	remote := ss.conn.RemoteAddr()
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		s.log.Warn("request line too long; closing", "remote", remote)
	case errors.Is(err, os.ErrDeadlineExceeded) && !s.closing():
		s.log.Info("client idle too long; closing", "remote", remote, "idle", s.cfg.IdleTimeout)
	case errors.Is(err, io.EOF) && ss.r.Buffered() > 0:
		s.log.Info("last line has no newline; ignored", "remote", remote, "bytes", ss.r.Buffered())
	}
}

// awaitRequest waits, in the waiting room, until the client has sent a whole
// request line, reading into the session's buffer without running anything.
// It reports false when the connection ends instead (readFailed says why): a
// line longer than maxLine, which is no request of this protocol; the end of
// the stream (a last line without '\n' may be a request cut short by a client
// that died while writing it, "buy 1 100" cut to "buy 1 10": it is not run,
// as chapter 05's event loop does); a client that took IdleTimeout; Close.
//
// The client gets IdleTimeout for the whole line, not for each of its bytes:
// one that trickles a byte at a time is cut off too. The check for Close
// comes after the deadline is set: Close's read deadline (in the past) must
// not be replaced by a later one, and if Close set it before this one,
// closing() sees it, because Close marks the server closed first.
func (s *Server) awaitRequest(ss *session) bool {
	if lineBuffered(ss.r) {
		return true
	}
	// TODO(ex 4.5): Done when: a client that sends nothing cannot hold its
	// connection for ever: before the wait, the read deadline is at least
	// IdleTimeout away, and it is moved (one system call) only when rearm says
	// the old one is too near, ss.readBy remembering it. Checked by
	// TestEx4_5_WorkerPool.
	if s.closing() {
		return false
	}
	for !lineBuffered(ss.r) {
		n := ss.r.Buffered()
		if n == maxLine {
			s.readFailed(ss, bufio.ErrBufferFull)
			return false
		}
		if _, err := ss.r.Peek(n + 1); err != nil {
			s.readFailed(ss, err)
			return false
		}
	}
	return true
}

// rearm returns the deadline to use for a wait that may last up to d: the
// current one while at least d is left, or else one d plus a slack of d/8
// from now (moved reports which). Moving a deadline costs a timer operation
// in the runtime, and a busy client asks for thousands of waits a second:
// with the slack, one deadline serves every wait of the next d/8, and a wait
// is cut after between d and 9d/8.
func rearm(current time.Time, d time.Duration) (at time.Time, moved bool) {
	now := time.Now()
	if current.Sub(now) >= d {
		return current, false
	}
	return now.Add(d + d/8), true
}

// flush writes the gathered replies. The client gets WriteTimeout to take
// them (CloseGrace once the server is closing), so a client that never reads
// holds a worker for a bounded time only. It reports whether the write
// succeeded.
func (s *Server) flush(ss *session) bool {
	if len(ss.out) == 0 {
		return true
	}
	// TODO(ex 4.5): Done when: a client that never reads cannot block the write
	// for ever: the write deadline is at least WriteTimeout away (moved only
	// when rearm says so, as for reads, ss.writeBy remembering it), and once
	// the server is closing it is CloseGrace from now instead, because Close's
	// deadline must win. Checked by TestEx4_5_WorkerPool.
	_, err := ss.conn.Write(ss.out)
	ss.out = ss.out[:0]
	if err != nil {
		s.log.Debug("writing replies failed", "remote", ss.conn.RemoteAddr(), "err", err)
		return false
	}
	return true
}

func trimNewline(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		return line[:n-1]
	}
	return line
}

// closing reports, without blocking, whether Close has been called.
func (s *Server) closing() bool {
	select {
	case <-s.quit:
		return true
	default:
		return false
	}
}

// execute runs one request and appends its reply record to ss.out. It
// reports whether the request was exit, which gets no reply.
func (s *Server) execute(ss *session, line []byte) (exit bool) {
	// TODO(ex 4.2): Done when: every line appends exactly one reply record to
	// the session's batch: a parse error its reply, an empty line the prompt to
	// type, show the listing, buy and sell the outcome of the tree's operation;
	// exit appends nothing and reports that the session ends. Checked by
	// TestEx4_2_Commands.
	return false
}

// show appends the listing: the stocks in pre-order, as many whole lines as
// fit in one record.
func (s *Server) show(ss *session) {
	s.lock.RLock()
	ss.stocks = s.tree.AppendPreOrder(ss.stocks[:0])
	s.lock.RUnlock()
	start := len(ss.out)
	ss.out, _ = stockproto.AppendShow(ss.out, ss.stocks)
	ss.out = stockproto.FinishRecord(ss.out, start)
}

// trade runs a buy or sell under the tree lock and returns the reply text.
func (s *Server) trade(op func(id, n int) error, req stockproto.Request, ok string) string {
	if s.cfg.Granularity == StockLocks {
		s.lock.RLock()
		defer s.lock.RUnlock()
	} else {
		s.lock.Lock()
		defer s.lock.Unlock()
	}
	switch err := op(req.ID, req.N); {
	case err == nil:
		s.dirty.Store(true)
		return ok
	case errors.Is(err, ErrNoSuchStock):
		return stockproto.NoSuchStock
	case errors.Is(err, ErrNotEnough):
		return stockproto.NotEnough
	default: // ErrOverflow: the count cannot hold that many
		return stockproto.InvalidArgument
	}
}
