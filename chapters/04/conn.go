package stock

import (
	"bufio"
	"errors"
	"net"

	"serverlab/tools/stockfile"
	"serverlab/tools/stockproto"
)

// maxLine bounds a request line, as the original's MAXLINE did. A longer
// line is no request of this protocol; the connection is closed.
const maxLine = stockproto.RecordSize

// maxBatch bounds the replies gathered before a write: a client that
// pipelines thousands of requests cannot make the server hold megabytes.
const maxBatch = 8 * stockproto.RecordSize

// session is the per-connection state of a worker: buffers reused for every
// request of the connection.
type session struct {
	r      *bufio.Reader
	out    []byte            // replies not yet written
	stocks []stockfile.Stock // scratch for show
}

// serveConn answers requests on conn until the client says exit, closes the
// connection, or the server closes. The caller closes conn.
//
// Replies to pipelined requests (several lines in one write) are gathered and
// written together once no further request is buffered (or maxBatch is
// reached): one write per batch instead of one per request.
func (s *Server) serveConn(conn net.Conn) {
	// TODO(ex 4.2): read request lines with a bufio.Reader of maxLine bytes
	// (ReadSlice('\n'); bufio.ErrBufferFull means a line too long: return).
	// Run each line with s.execute(ss, trimNewline(line)), which appends its
	// reply record to ss.out. Write ss.out (and reset it) when the request
	// was exit, when no further request is buffered (ss.r.Buffered() == 0),
	// when len(ss.out) >= maxBatch, or when s.closing(); return after exit,
	// after a last line that ended at end of stream instead of '\n', after
	// any other read or write error, or when s.closing().
	// Checked by TestEx4_2_Commands.
	s.log.Error("serveConn is not implemented yet (ex 4.2)", "remote", conn.RemoteAddr())
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
	// TODO(ex 4.2): parse the line with stockproto.Parse; a parse error is
	// answered with stockproto.ReplyOf(err). Then by req.Cmd: Exit returns
	// true (no reply); Empty is answered stockproto.PleaseType; Show with
	// s.show(ss); Buy and Sell with s.trade(s.tree.Buy or s.tree.Sell, req,
	// stockproto.BuyOK or SellOK). Append every reply with
	// stockproto.AppendRecord(ss.out, text). Checked by TestEx4_2_Commands.
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
