package stock

import (
	"bufio"
	"errors"
	"io"
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
	s.log.Debug("connected", "remote", conn.RemoteAddr())
	defer s.log.Debug("connection closed", "remote", conn.RemoteAddr())
	ss := &session{r: bufio.NewReaderSize(conn, maxLine)}
	for {
		line, err := ss.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			s.log.Warn("request line too long; closing", "remote", conn.RemoteAddr())
			return
		}
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			return // end of stream, reset, or Close's read deadline
		}
		exit := s.execute(ss, trimNewline(line))
		// The last request of conn: exit, a last line without '\n', or Close.
		last := exit || err != nil || s.closing()
		if last || ss.r.Buffered() == 0 || len(ss.out) >= maxBatch {
			if _, err := conn.Write(ss.out); err != nil {
				return
			}
			ss.out = ss.out[:0]
		}
		if last {
			return
		}
	}
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
	req, err := stockproto.Parse(string(line))
	if err != nil {
		ss.out = stockproto.AppendRecord(ss.out, stockproto.ReplyOf(err))
		return false
	}
	switch req.Cmd {
	case stockproto.Exit:
		return true
	case stockproto.Empty:
		ss.out = stockproto.AppendRecord(ss.out, stockproto.PleaseType)
	case stockproto.Show:
		s.show(ss)
	case stockproto.Buy:
		ss.out = stockproto.AppendRecord(ss.out, s.trade(s.tree.Buy, req, stockproto.BuyOK))
	case stockproto.Sell:
		ss.out = stockproto.AppendRecord(ss.out, s.trade(s.tree.Sell, req, stockproto.SellOK))
	}
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
