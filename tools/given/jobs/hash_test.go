package jobs

import (
	"strings"
	"testing"
)

// hashVectors are std::hash<std::string>{}(s) computed with g++ 12.2 /
// libstdc++ on x86-64 (Debian 12). The prefixes of an alphabet cover the empty
// string, every tail length 1–7 with zero, one and two full words before it,
// and the lengths that are exact multiples of 8; the high bytes catch a signed
// load of the tail.
var hashVectors = []struct {
	text string
	want uint64
}{
	// docs/protocols.md §2
	{"hello world", 5577293430985752569},
	{"a", 4993892634952068459},
	{"ThreadForge", 2756856608899862579},
	{"x y  z", 13417157620362267345},
	// Prefixes of "0123456789abcdefghijklmnopqrstuvwxyz", lengths 0–17.
	{"", 6142509188972423790},
	{"0", 2297668033614959926},
	{"01", 16939277104541601477},
	{"012", 2304781960727645431},
	{"0123", 4922773860975567173},
	{"01234", 14732337111476466123},
	{"012345", 3668540621198804444},
	{"0123456", 6249936723022911255},
	{"01234567", 17577775539208015928},
	{"012345678", 9289850649958642363},
	{"0123456789", 15068358565474034197},
	{"0123456789a", 14857173059718877620},
	{"0123456789ab", 12248184482977179292},
	{"0123456789abc", 13233390238734701476},
	{"0123456789abcd", 15991909707842833429},
	{"0123456789abcde", 9495164986409083211},
	{"0123456789abcdef", 10613591747391057286},
	{"0123456789abcdefg", 2203838674469644272},
	// Bytes 0xF8… 0xFF: a 7-byte tail, one word, a word and a 7-byte tail.
	{"\xf8\xf9\xfa\xfb\xfc\xfd\xfe", 12480681329908841563},
	{"\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff", 16376774595158521215},
	{"\xf8\xf9\xfa\xfb\xfc\xfd\xfe\xff\xf8\xf9\xfa\xfb\xfc\xfd\xfe", 12575708910654219443},
}

func TestHashVectors(t *testing.T) {
	for _, v := range hashVectors {
		if got := Hash(v.text); got != v.want {
			t.Errorf("Hash(%q) (len %d) = %d, want %d", v.text, len(v.text), got, v.want)
		}
		if got := HashBytes([]byte(v.text)); got != v.want {
			t.Errorf("HashBytes(%q) (len %d) = %d, want %d", v.text, len(v.text), got, v.want)
		}
	}
}

// TestHashTailSensitivity checks that every byte of every tail length reaches
// the result, which a wrong tail loop (off by one, wrong direction) breaks.
func TestHashTailSensitivity(t *testing.T) {
	for n := 1; n <= 24; n++ {
		base := []byte(strings.Repeat("q", n))
		h := HashBytes(base)
		for i := range base {
			flipped := append([]byte(nil), base...)
			flipped[i] ^= 0x01
			if HashBytes(flipped) == h {
				t.Errorf("len %d: changing byte %d does not change the hash %d", n, i, h)
			}
		}
	}
}
