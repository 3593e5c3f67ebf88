package chatcore

import (
	"serverlab/tools/given/chatcore/proto"
)

// register runs createUser in its address's turn of the hash queue
// (s.turns, guard.FairQueue), as checkPassword runs a login's hash: the
// cores go round-robin by client address, so a flood of registrations from
// a few addresses delays those addresses, and an honest login from another
// waits about one hash per address waiting (attacker5's F9: 10 addresses
// sending registrations had filled a first-come queue, and 30 honest
// logins were told Server busy. for 6 s). A registration the queue refuses
// (its address's line is full, or waited past HashWait for a turn) is
// answered Server busy. without a hash, costing its address nothing.
func (s *Server) register(c *conn, m proto.CreateUserRequest) error {
	var err error
	if !s.turns.Run(c.addr, func() { err = s.createUser(c, m) }) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgServerBusy})
		return nil
	}
	return err
}
