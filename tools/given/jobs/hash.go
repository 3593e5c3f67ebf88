package jobs

// Constants of libstdc++'s _Hash_bytes for a 64-bit size_t.
const (
	// HashSeed is the seed std::hash<std::string> passes to _Hash_bytes.
	HashSeed = 0xc70f6907
	hashMul  = 0xc6a4a793_5bd1e995
)

// Hash returns what g++'s std::hash<std::string> returns for text on x86-64:
// std::_Hash_bytes(data, len, 0xc70f6907) from libstdc++-v3/libsupc++/
// hash_bytes.cc, which is MurmurHash64A ("MurmurHashUnaligned2" in its
// comments). The body is read as little-endian 64-bit words; the 1–7 bytes
// left over are packed with the last byte most significant (load_bytes) and
// mixed in once. On a little-endian machine that is the same value the
// canonical MurmurHash64A's switch produces.
//
// std::hash is implementation-defined: another C++ library, or g++ on a
// big-endian machine, gives other numbers. The protocol fixes this one.
func Hash(text string) uint64 { return murmur64A(text) }

// HashBytes is Hash for a []byte, so that a server can hash the argument in its
// read buffer without converting it to a string.
func HashBytes(text []byte) uint64 { return murmur64A(text) }

func murmur64A[T string | []byte](p T) uint64 {
	h := HashSeed ^ uint64(len(p))*hashMul
	for len(p) >= 8 {
		h ^= shiftMix(load64(p)*hashMul) * hashMul
		h *= hashMul
		p = p[8:]
	}
	if len(p) > 0 {
		h ^= loadTail(p)
		h *= hashMul
	}
	h = shiftMix(h) * hashMul
	return shiftMix(h)
}

// load64 reads p[0:8] as a little-endian word (the compiler turns the shifts
// into one load).
func load64[T string | []byte](p T) uint64 {
	_ = p[7]
	return uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
		uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56
}

// loadTail packs the 1–7 bytes of p with the last one most significant, as
// libstdc++'s load_bytes does.
func loadTail[T string | []byte](p T) uint64 {
	var r uint64
	for i := len(p) - 1; i >= 0; i-- {
		r = r<<8 | uint64(p[i])
	}
	return r
}

func shiftMix(v uint64) uint64 { return v ^ v>>47 }
