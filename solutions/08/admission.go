package chatscale

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"runtime"
	"sync"
	"time"

	"serverlab/tools/given/chatcore/guard"
	"serverlab/tools/given/chatcore/proto"
)

// admission decides which password hashes this server computes, as chapter
// 07's server does (its lesson explains each part): a hash queue that serves
// the cores round-robin by client address (guard.FairQueue), a memo of
// passwords proved lately so that logging in after registering costs no
// second hash, and a budget of registrations per client address. It is made
// on first use, from s.cfg.
type admission struct {
	once          sync.Once
	stop          func() // refuses every hash still waiting, and those to come
	hashes        *guard.FairQueue
	logins        loginMemo
	registrations *guard.Failures // Failed spends one of an address's tokens
}

// admit is s's admission, made on first use.
func (s *Server) admit() *admission {
	a := &s.admission
	a.once.Do(func() {
		done := make(chan struct{})
		var once sync.Once
		a.stop = func() { once.Do(func() { close(done) }) }
		l := s.cfg.Limits
		a.hashes = guard.NewFairQueue(runtime.GOMAXPROCS(0), l.MaxConnsPerAddress, l.HashQueue, l.HashWait, done)
		a.logins.init()
		a.registrations = guard.NewFailures(l.AddressRegistrations, s.cfg.Limits.RegistrationWindow)
	})
	return a
}

// hashNewPassword hashes the password of a registration, or answers why it
// will not (and reports refused): the address registered its budget lately
// (Too many registrations…), or the hash queue refused it (Server busy.:
// the address's line is full, or waited past HashWait for its turn). A
// refused registration costs the address nothing.
func (s *Server) hashNewPassword(c *conn, m proto.CreateUserRequest) (hash string, refused bool, err error) {
	a, addr := s.admit(), c.addr
	if !a.registrations.Allowed(addr) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgTooManyRegistrations})
		return "", true, nil
	}
	if !a.hashes.Run(addr, func() { hash, err = hashPassword(m.Password, s.cfg.HashIterations) }) {
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
// answers Server busy. (and reports refused) if the hash queue refused it.
// A password the user proved to know lately on this server is not hashed
// again. gen is the memo's generation from before id and hash were read
// (see loginMemo.generation).
func (s *Server) checkLogin(c *conn, m proto.AuthenticateRequest, id uint32, hash string, gen uint64) (match, refused bool) {
	a := s.admit()
	if a.logins.recall(id, m.Password) {
		return true, false
	}
	if !a.hashes.Run(c.addr, func() { match = checkPassword(hash, m.Password) }) {
		s.reply(c, proto.ErrorResponse{RequestID: m.RequestID, Value: proto.MsgServerBusy})
		return false, true
	}
	if match {
		a.logins.remember(gen, id, m.Password)
	}
	return match, false
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
