package chatcore

import (
	"sync/atomic"

	"serverlab/tools/given/chatcore/proto"
)

// registrationShare keeps room in the hash queue for logins. Registrations
// and logins wait in one queue, and a queue sized by time is full for both
// once it is full: 10 addresses sending registrations filled it, and 30
// honest logins were told Server busy. for 6 s (attacker5's F9), although
// each registration costs its address a share of AddressRegistrations and
// each login was a user's only way in. So the registrations in flight —
// waiting for a hash or hashing — may hold the cores for at most three
// quarters of HashWait, by the queue's own estimate of a hash; one past it
// is answered Server busy. before it queues (costing its address nothing),
// and a login always finds a quarter of the queue (2 s, about 200 hashes
// on 2 cores) that no registration can take. The original load tester's
// 451 registrations at once (4.5 s of hashes on 2 quiet cores) still fit in
// the three quarters.
type registrationShare struct {
	q        *hashQueue
	inFlight atomic.Int64
}

// enter counts one registration in flight, or reports false if the
// registrations already in flight would keep the cores busy for more than
// three quarters of the wait.
func (r *registrationShare) enter() (done func(), ok bool) {
	n := r.inFlight.Add(1)
	if r.q.expectedWait(n) > r.q.wait*3/4 {
		r.inFlight.Add(-1)
		return nil, false
	}
	return func() { r.inFlight.Add(-1) }, true
}

// register runs createUser inside the registrations' share of the hash
// queue (see registrationShare).
func (s *Server) register(c *conn, m proto.CreateUserRequest) error {
	done, ok := s.registering.enter()
	if !ok {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgServerBusy})
		return nil
	}
	defer done()
	return s.createUser(c, m)
}
