package chatcore

import (
	"errors"

	"serverlab/tools/given/chatcore/proto"
)

// Why a password check was not done. Their texts are the protocol's, so
// answerFailure sends them as they are, with the request's id.
var (
	//lint:ignore ST1005 the protocol's verbatim error text
	errBusy = errors.New(proto.MsgServerBusy)
	//lint:ignore ST1005 the protocol's verbatim error text
	errTooManyFailures = errors.New(proto.MsgTooManyFailures)
)

// cores bounds the password hashes running at once to GOMAXPROCS: each
// takes Hash.MemoryKiB and a core, and 450 clients logging in together must
// not take 450 times that. Who gets a core when they are all taken is the
// fair queue's choice (s.turns, guard.FairQueue: round-robin by client
// address), which register and checkPassword pass first; so a hash that
// reaches cores finds one free, unless the administrator's own hashes
// (AddUser, outside any connection) hold it. No hash waits once the server
// starts closing (done): Close waits for the readers, and a reader must not
// wait for a hash nobody will get.
type cores struct {
	slots chan struct{}
	done  <-chan struct{}
}

// run runs f on a core, or returns errBusy if the server closed first.
func (c cores) run(f func()) error {
	select {
	case c.slots <- struct{}{}:
	case <-c.done:
		return errBusy
	}
	defer func() { <-c.slots }()
	f()
	return nil
}
