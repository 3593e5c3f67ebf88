package webtest

import (
	"fmt"
	"time"

	"serverlab/tests/testkit"
)

// Ageing at a rate between "never" and "always FIFO": a request is forgiven
// ageRate bytes for every second it has waited, so a file agedBig bytes
// larger than another is overtaken by it only if it came less than
// agedBig / ageRate (1.6 s) before it.
const (
	ageRate = 500e3 // bytes per second
	agedBig = 800e3 // bytes
	// soonAfter is how long after the big file the small one comes when the
	// small one must still go first: well under 1.6 s, so that a loaded
	// machine's delays do not change the answer, and far over 1.6 ms, so that
	// a rate taken per millisecond does.
	soonAfter = 100 * time.Millisecond
	// longAfter is how long the big file waits before the others come when
	// it must go first: past 1.6 s on any machine (the server sees at least
	// this much), and far below the 96 s a rate per minute would need.
	longAfter = 2 * time.Second
)

// checkAgeingRate: the key is size + AgeRate × seconds since arrival, with
// the rate in bytes per second. A 800 kB file that has waited 0.1 s still
// goes after a 100-byte one (it is owed 50 kB); once it has waited 2 s it goes
// before it, and before a CGI request and a failed one that came after it:
// their key is 0 plus their own arrival, aged like every other request.
func checkAgeingRate(k *testkit.T, impl Impl, s *site) {
	k.Helper()
	s.write(k, "aged-big.txt", make([]byte, int(agedBig)))
	h := startHeld(k, impl, s, Config{Threads: 1, Buffers: 32, SFF: true, AgeRate: ageRate},
		"/hold1.txt", "/hold2.txt")
	what := func(pause time.Duration, rule string) string {
		return fmt.Sprintf("-s SFF -t 1 -age %g (bytes forgiven per second waited), /aged-big.txt (%g bytes) "+
			"queued %v before the others: %s", float64(ageRate), float64(agedBig), pause, rule)
	}
	sffRoundPaused(k, h, "/hold1.txt", []string{"/aged-big.txt", "/small.txt"}, soonAfter,
		[]string{"/small.txt", "/aged-big.txt"},
		what(soonAfter, "it is owed 50 kB, not enough to pass a 100-byte file (is the rate taken per second, not per millisecond or nanosecond?)"))
	sffRoundPaused(k, h, "/hold2.txt", []string{"/aged-big.txt", "/env.cgi?aged", "/missing-aged.txt", "/small.txt"}, longAfter,
		[]string{"/aged-big.txt", "/env.cgi?aged", "/missing-aged.txt", "/small.txt"},
		what(longAfter, "it is owed 1 MB, so it goes first; the CGI request and the 404 (key 0) age like any "+
			"other request, and the small file came last (is the rate taken per second, not per minute, and "+
			"added to every key?)"))
}
