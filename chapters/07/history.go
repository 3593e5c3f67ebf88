package chatcore

import "serverlab/tools/given/chatcore/proto"

// historyGate lets a GetChats through to getChats only if the server can
// afford its answer: a history is up to a 1 MiB frame, read from the store
// and then queued for a client that may never read it. It is answered
// Server busy. at once, without reading the store, when guard.Reads says
// so: Limits.HistoryReads GetChats are being read already, or the half of
// the output budget that large replies may use is spent (sendLarge would
// refuse the answer anyway, after the work).
//
// The reader waits for nothing here: the client may ask again.
func (s *Server) historyGate(c *conn, m proto.GetChatsRequest) error {
	done, ok := s.historyReads.Enter()
	if !ok {
		s.busy(c, m)
		return nil
	}
	defer done()
	return s.getChats(c, m)
}
