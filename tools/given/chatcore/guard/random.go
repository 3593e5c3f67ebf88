package guard

import "crypto/rand"

// Random fills p with random bytes from the kernel (crypto/rand, which
// never fails: it panics instead), for salts and keys.
//
// The chapters call this, not crypto/rand.Read, for the race detector's
// sake: rand.Read has getrandom(2) fill p, a write no Go code makes, so a
// race on a p two goroutines share went unreported (cheater5, C: a flag
// written by rand.Read while another goroutine read it, no report). Random
// writes p once more in Go after the kernel did (under -race a copy is
// runtime.slicecopy, which reports the range written), so that such a race
// is reported as any other.
func Random(p []byte) {
	rand.Read(p)
	copy(p, p)
}
