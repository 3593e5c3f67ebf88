package jobs

// Parameters of MT19937, the 32-bit Mersenne Twister (Matsumoto & Nishimura
// 1998), as fixed by the C++ standard for std::mt19937.
const (
	mtN       = 624        // state size in words
	mtM       = 397        // middle word offset
	mtMatrixA = 0x9908b0df // twist matrix
	mtUpper   = 0x80000000 // most significant bit of a word
	mtLower   = 0x7fffffff // the other 31 bits
	mtInitMul = 1812433253 // seeding multiplier
)

// MT19937DefaultSeed is the seed of a default-constructed std::mt19937; the
// zero MT19937 behaves as if seeded with it.
const MT19937DefaultSeed = 5489

// MT19937 is the 32-bit Mersenne Twister with the semantics of C++'s
// std::mt19937: the same seeding, the same outputs. SORT needs exactly the
// original's numbers, which is why the course does not use math/rand.
//
// The zero value is ready to use and equals std::mt19937{} (seed 5489). An
// MT19937 is not safe for concurrent use; it is 2.5 KB, so a worker keeps one
// in its [Scratch] rather than allocating one per job.
type MT19937 struct {
	state  [mtN]uint32
	left   int  // outputs left in state before the next twist; 0 means twist first
	seeded bool // false only for the zero value
}

// Seed resets the generator as std::mt19937::seed(s) does; the next Uint32
// returns the first output for that seed.
func (m *MT19937) Seed(s uint32) {
	m.state[0] = s
	for i := 1; i < mtN; i++ {
		prev := m.state[i-1]
		m.state[i] = mtInitMul*(prev^prev>>30) + uint32(i)
	}
	m.left = 0
	m.seeded = true
}

// Uint32 returns the next output, like calling a std::mt19937.
func (m *MT19937) Uint32() uint32 {
	if m.left == 0 {
		m.refill()
	}
	y := m.state[mtN-m.left]
	m.left--
	return temper(y)
}

// fillInt32 sets dst to the next len(dst) outputs, each cast to int32 — the
// same values as calling Uint32 len(dst) times, without the per-call overhead:
// it tempers whole runs of the state straight into dst.
func (m *MT19937) fillInt32(dst []int32) {
	for len(dst) > 0 {
		if m.left == 0 {
			m.refill()
		}
		run := m.state[mtN-m.left:]
		run = run[:min(len(run), len(dst))]
		out := dst[:len(run)]
		for i, y := range run {
			out[i] = int32(temper(y))
		}
		m.left -= len(run)
		dst = dst[len(run):]
	}
}

// refill twists the state into the next 624 untempered outputs, seeding the
// zero value first.
func (m *MT19937) refill() {
	if !m.seeded {
		m.Seed(MT19937DefaultSeed)
	}
	s := &m.state
	// The recurrence x[i] = x[i+M] ^ twist(x[i], x[i+1]) is split in three
	// loops so that no index needs a modulo and the compiler can drop the
	// bounds checks.
	for i := 0; i < mtN-mtM; i++ {
		s[i] = s[i+mtM] ^ twist(s[i], s[i+1])
	}
	for i := mtN - mtM; i < mtN-1; i++ {
		s[i] = s[i+mtM-mtN] ^ twist(s[i], s[i+1])
	}
	s[mtN-1] = s[mtM-1] ^ twist(s[mtN-1], s[0])
	m.left = mtN
}

// twist combines the top bit of x with the low 31 bits of next and multiplies
// by the twist matrix.
func twist(x, next uint32) uint32 {
	y := x&mtUpper | next&mtLower
	return y>>1 ^ -(y&1)&mtMatrixA
}

// temper improves the equidistribution of a raw state word.
func temper(y uint32) uint32 {
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}
