package guard

import "sync"

// Shares decides whether a client address may make one more of something
// the server keeps for good once made — a channel — and counts it. A cap on
// the total alone is a cap one client can spend for everyone: 65 users from
// one address made all 4,096 channels in 5 s, and no honest user could ever
// make one again (issue 35). So, as Gate does for connections, Shares gives
// each address a share and keeps a reserve:
//   - an address may make at most perAddr;
//   - the last eighth of max is kept for addresses that made fewer than
//     Small() (a sixteenth of perAddr, at least 1).
//
// With the defaults (4,096 channels, 512 per address) one address makes at
// most 512 of them, seven fill 3,584, and the last 512 go 32 at a time to
// other addresses. What is made is never given back while the server runs
// (a channel is not deleted), so the counts are since the start; Give is
// only for a Take that made nothing.
type Shares struct {
	max, perAddr int

	mu     sync.Mutex
	byAddr map[string]int
}

// NewShares makes the shares of at most max things, perAddr from one
// address.
func NewShares(max, perAddr int) *Shares {
	return &Shares{max: max, perAddr: perAddr, byAddr: make(map[string]int)}
}

// Small is how many an address may have made and still take from the
// reserve: a sixteenth of perAddr, at least 1.
func (s *Shares) Small() int { return max(1, s.perAddr/16) }

// Take counts one more for addr, given that total are made or being made
// by everyone (the caller's count, which may include other servers'), or
// reports false: the total is at max, addr has made its share, or the
// total is in the reserve and addr has made Small() or more.
func (s *Shares) Take(addr string, total int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	made := s.byAddr[addr]
	switch {
	case total >= s.max, made >= s.perAddr:
		return false
	case total >= s.max-s.max/8 && made >= s.Small():
		return false
	}
	s.byAddr[addr] = made + 1
	return true
}

// Give takes back a count of Take's whose thing was not made (the name
// existed after all, or the store failed).
func (s *Shares) Give(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byAddr[addr]--; s.byAddr[addr] <= 0 {
		delete(s.byAddr, addr)
	}
}

// Forget drops every count: for a server whose store was wiped, where
// what the counts counted is gone.
func (s *Shares) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.byAddr)
}
