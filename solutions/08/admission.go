package chatscale

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"serverlab/tools/given/chatcore/guard"
	"serverlab/tools/given/chatcore/proto"
)

// admission decides which password hashes this server computes, as chapter
// 07's server does (its lesson explains each part): a hash queue sized by
// the time a client will wait, a memo of passwords proved lately so that
// logging in after registering costs no second hash, and a budget of
// registrations per client address. It is made on first use, from s.cfg.
type admission struct {
	once          sync.Once
	stop          func() // refuses every hash still waiting, and those to come
	hashes        *hashQueue
	registering   atomic.Int64 // registrations in flight: waiting for a hash or hashing (see hashNewPassword)
	logins        loginMemo
	registrations *guard.Failures // Failed spends one of an address's tokens
}

// admit is s's admission, made on first use.
func (s *Server) admit() *admission {
	a := &s.admission
	a.once.Do(func() {
		a.hashes = newHashQueue(runtime.GOMAXPROCS(0), s.cfg.Limits.HashQueue, s.cfg.Limits.HashWait)
		a.stop = a.hashes.stop
		a.logins.init()
		a.registrations = guard.NewFailures(s.cfg.Limits.AddressRegistrations, s.cfg.Limits.RegistrationWindow)
	})
	return a
}

// hashNewPassword hashes the password of a registration, or answers why it
// will not (and reports refused): the address registered its budget lately
// (Too many registrations…), or the hash cannot start in time (Server
// busy.). A refused registration costs the address nothing.
func (s *Server) hashNewPassword(c *conn, m proto.CreateUserRequest) (hash string, refused bool, err error) {
	a, addr := s.admit(), c.addr
	if !a.registrations.Allowed(addr) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgTooManyRegistrations})
		return "", true, nil
	}
	// The registrations in flight may hold the cores for three quarters of
	// HashWait at most, so that a login always finds room in the queue
	// (chapter 07's loginroom.go says why: attacker5's F9).
	n := a.registering.Add(1)
	defer a.registering.Add(-1)
	if a.hashes.expectedWait(n) > a.hashes.wait*3/4 {
		err = errBusy
	} else {
		err = a.hashes.run(func() { hash, err = hashPassword(m.Password, s.cfg.HashIterations) })
	}
	if errors.Is(err, errBusy) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgServerBusy})
		return "", true, nil
	}
	if err != nil {
		return "", false, err
	}
	a.registrations.Failed(addr)
	return hash, false, nil
}

// registered remembers that user id knows password: its first login, on
// this server, costs no second hash. gen is the memo's generation from
// before the id was handed out (see loginMemo.generation).
func (s *Server) registered(gen uint64, id uint32, password string) {
	s.admit().logins.remember(gen, id, password)
}

// checkLogin reports whether password matches user id's stored hash, or
// answers Server busy. (and reports refused) if the hash cannot start in
// time. A password the user proved to know lately on this server is not
// hashed again. gen is the memo's generation from before id and hash were
// read (see loginMemo.generation).
func (s *Server) checkLogin(c *conn, m proto.AuthenticateRequest, id uint32, hash string, gen uint64) (match, refused bool) {
	a := s.admit()
	if a.logins.recall(id, m.Password) {
		return true, false
	}
	err := a.hashes.run(func() { match = checkPassword(hash, m.Password) })
	if err != nil {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgServerBusy})
		return false, true
	}
	if match {
		a.logins.remember(gen, id, m.Password)
	}
	return match, false
}

// errBusy is why a hash was not computed: it could not start in time.
var errBusy = errors.New(proto.MsgServerBusy)

// hashQueue admits password hashes: at most GOMAXPROCS run at once, and a
// hash waits only if it can expect to start within wait, by the hashes
// ahead of it and how long a hash has held its core lately (a moving
// average). One that cannot is refused at once; one admitted that the
// cores did not reach within wait is refused then. Without it, 450
// registrations at once share the two cores, every hash finishes late, and
// every client times out together. Once the server closes (stop), no hash
// waits: Close waits for the readers. (Chapter 07's throttle.go has the
// same queue, explained.)
type hashQueue struct {
	slots    chan struct{}
	waiting  atomic.Int64
	limit    int64
	wait     time.Duration
	cost     atomic.Int64 // ns a hash holds its slot, moving average; 0 before the first
	samples  atomic.Int64 // hashes timed: the estimate refuses only after minSamples
	done     chan struct{}
	stopOnce sync.Once
}

func newHashQueue(slots, limit int, wait time.Duration) *hashQueue {
	return &hashQueue{slots: make(chan struct{}, slots), limit: int64(limit), wait: wait, done: make(chan struct{})}
}

// minSamples is how many hashes the queue times before it refuses on its
// estimate: the first ones of a process are the slowest (chapter 07's
// throttle.go says why).
const minSamples = 8

// expectedWait is how long the n-th waiter can expect to wait for a slot:
// n slots must free up first, and the cores free one every cost/slots (0
// until minSamples hashes were timed).
func (q *hashQueue) expectedWait(n int64) time.Duration {
	if q.samples.Load() < minSamples {
		return 0
	}
	return time.Duration(n * q.cost.Load() / int64(cap(q.slots)))
}

// stop refuses every hash still waiting, and every one to come.
func (q *hashQueue) stop() { q.stopOnce.Do(func() { close(q.done) }) }

// run runs f in a slot, or returns errBusy.
func (q *hashQueue) run(f func()) error {
	n := q.waiting.Add(1)
	if n > q.limit || q.expectedWait(n) > q.wait {
		q.waiting.Add(-1)
		return errBusy
	}
	t := time.NewTimer(q.wait)
	defer t.Stop()
	select {
	case q.slots <- struct{}{}:
		q.waiting.Add(-1)
	case <-t.C:
		q.waiting.Add(-1)
		return errBusy
	case <-q.done:
		q.waiting.Add(-1)
		return errBusy
	}
	defer func() { <-q.slots }()
	start := time.Now()
	f()
	d := int64(time.Since(start))
	q.samples.Add(1)
	for {
		old := q.cost.Load()
		cost := d
		if old != 0 {
			cost = old + (d-old)/8
		}
		if q.cost.CompareAndSwap(old, cost) {
			return nil
		}
	}
}

// loginMemo remembers, for loginMemoTTL, the HMAC-SHA-256 of the password
// each user last proved to know on this server, under a key drawn at start
// and never stored: nothing in it can be replayed as a password, and
// nothing of it leaves the process. Only a password that matched is kept,
// so a wrong guess still pays the whole hash.
//
// It has a generation, which forget moves on: a login or a registration
// reads it before it reads the user from the bucket, and what it learned is
// remembered only if no forget came between. Without it a login that read
// the old bucket, hashed while the store was wiped and forgetUsers ran,
// then remembered the old user's password under an id the new bucket
// hands to someone else (fix35b's note on attacker5's F2).
type loginMemo struct {
	key []byte
	mu  sync.Mutex
	m   map[uint32]memoEntry
	gen uint64
}

// generation is the memo's generation now: read it before reading what is
// to be remembered.
func (lm *loginMemo) generation() uint64 {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	return lm.gen
}

type memoEntry struct {
	tag     [sha256.Size]byte
	expires time.Time
}

const loginMemoTTL = 10 * time.Minute

func (lm *loginMemo) init() {
	lm.key = make([]byte, 32)
	guard.Random(lm.key) // never fails (crypto/rand panics instead)
	lm.m = make(map[uint32]memoEntry)
}

func (lm *loginMemo) tag(id uint32, password string) (t [sha256.Size]byte) {
	h := hmac.New(sha256.New, lm.key)
	binary.Write(h, binary.BigEndian, id)
	h.Write([]byte(password))
	h.Sum(t[:0])
	return t
}

// remember records that user id knows password, unless the memo was
// forgotten since generation gen.
func (lm *loginMemo) remember(gen uint64, id uint32, password string) {
	t := lm.tag(id, password)
	lm.mu.Lock()
	defer lm.mu.Unlock()
	if gen != lm.gen {
		return // learned from a bucket that is gone
	}
	lm.m[id] = memoEntry{tag: t, expires: time.Now().Add(loginMemoTTL)}
}

// forget forgets every password remembered: the users they were proved
// for are gone (see forgetUsers).
func (lm *loginMemo) forget() {
	lm.mu.Lock()
	defer lm.mu.Unlock()
	clear(lm.m)
	lm.gen++
}

// recall reports whether user id proved to know password lately; the tags
// are compared in constant time.
func (lm *loginMemo) recall(id uint32, password string) bool {
	t := lm.tag(id, password)
	lm.mu.Lock()
	e, ok := lm.m[id]
	if ok && time.Now().After(e.expires) {
		delete(lm.m, id)
		ok = false
	}
	lm.mu.Unlock()
	return ok && hmac.Equal(t[:], e.tag[:])
}
