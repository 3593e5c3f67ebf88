package grade

import (
	"bytes"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// stdAssembly classifies every standard package with assembly (SFiles) on
// the platforms the test lists: unseen when its assembly can write memory a
// caller hands it without the race detector seeing the write (the gate must
// then restrict it and every package that uses it), seen when it writes
// only its own state or plain values, or the race detector is told.
var stdAssembly = map[string]struct {
	unseen bool
	why    string
}{
	"internal/abi":                   {false, "FuncPC stubs: no memory"},
	"internal/cpu":                   {false, "CPUID and XGETBV into the package's own feature flags"},
	"internal/bytealg":               {false, "compares, searches and counts: reads its arguments, writes none"},
	"internal/chacha8rand":           {false, "fills the generator's own buffer, never the caller's"},
	"internal/reflectlite":           {false, "no code (the file lets the package declare body-less functions)"},
	"internal/runtime/atomic":        {false, "the runtime's own atomics, for its own state"},
	"internal/runtime/sys":           {false, "no code (empty.s)"},
	"internal/runtime/syscall/linux": {false, "the runtime's own raw system calls"},
	"internal/runtime/gc/scan":       {false, "the garbage collector's heap scan: writes only its own bitmaps"},
	"internal/runtime/startlinetest": {false, "a test helper of the runtime's"},
	"internal/syscall/unix":          {false, "libc trampolines (darwin) for the standard library's own calls; crypto/rand, the one that fills a caller's buffer, is restricted"},
	"runtime":                        {false, "memmove and memclr serve copy, append and clear, which the compiler reports to the race detector before the call; restricted anyway"},
	"runtime/cgo":                    {false, "cgo's entry points; restricted"},
	"runtime/debug":                  {false, "no code (the file lets the package declare body-less functions); restricted"},
	"sync/atomic":                    {false, "a race build sends every atomic operation through the race detector"},
	"math":                           {false, "floating-point values in, values out"},
	"hash/crc32":                     {false, "reads its input, returns a checksum: writes nothing of the caller's"},
	"reflect":                        {false, "call trampolines for frames reflect builds; restricted anyway"},
	"syscall":                        {false, "Read, Write, Pread and Pwrite tell the race detector what the kernel wrote; the raw entry points are restricted member by member"},
	"os/signal":                      {false, "no code (sig.s lets the package declare body-less functions)"},
	"vendor/golang.org/x/sys/cpu":    {false, "CPUID into the package's own feature flags"},

	"math/big":                                     {true, "addVV, subVV, shlVU… write z's words, which SetBits shares with the caller"},
	"crypto/md5":                                   {true, "the block function writes the digest it is handed"},
	"crypto/sha1":                                  {true, "the block function writes the digest it is handed"},
	"crypto/internal/fips140/sha256":               {true, "the block function writes the digest it is handed"},
	"crypto/internal/fips140/sha512":               {true, "the block function writes the digest it is handed"},
	"crypto/internal/fips140/sha3":                 {true, "keccakF1600 writes the state it is handed"},
	"crypto/internal/fips140/subtle":               {true, "XORBytes writes its destination slice"},
	"crypto/internal/fips140/aes":                  {true, "Block.Encrypt, Decrypt and CTR write their destination slices"},
	"crypto/internal/fips140/aes/gcm":              {true, "Seal and Open write their destination slices"},
	"crypto/internal/fips140/nistec":               {true, "field arithmetic writes the elements it is handed"},
	"crypto/internal/fips140/edwards25519/field":   {true, "field arithmetic writes the elements it is handed"},
	"crypto/internal/fips140/bigmod":               {true, "Nat arithmetic writes the limbs it is handed"},
	"crypto/internal/boring/sig":                   {true, "markers for BoringCrypto builds (no memory), in crypto/ as the rest"},
	"crypto/internal/boring/bcache":                {true, "no code (stub.s), in crypto/ as the rest"},
	"crypto/internal/fips140/check/checktest":      {true, "a test helper of the FIPS self-check, in crypto/ as the rest"},
	"crypto/x509/internal/macos":                   {true, "trampolines into macOS's Security framework, which writes what it is handed"},
	"vendor/golang.org/x/crypto/chacha20":          {true, "XORKeyStream writes its destination slice"},
	"vendor/golang.org/x/crypto/chacha20poly1305":  {true, "Seal and Open write their destination slices"},
	"vendor/golang.org/x/crypto/internal/poly1305": {true, "writes the MAC state it is handed"},
}

// assemblyPlatforms are where the standard library's assembly is listed:
// this machine's and the platforms the course is graded on.
var assemblyPlatforms = []string{runtime.GOOS + "/" + runtime.GOARCH, "linux/amd64", "linux/arm64", "darwin/arm64"}

// TestGateRestrictsUnseenAssembly derives, from the Go toolchain at hand,
// every standard package with assembly and every exported package that
// uses one: each with assembly must be classified in stdAssembly, each
// unseen one must be in an unseenWriters tree, and each exported package
// that uses an unseen one must be restricted by the gate (the go command's
// dependencies tell it, hidesWrites) or vetted in handsNoCallerMemory. A
// new Go release that adds such a package fails here until it is
// classified.
func TestGateRestrictsUnseenAssembly(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the standard library several times")
	}
	asm := map[string]bool{}
	deps := map[string][]string{} // exported package → its dependencies, on some platform
	for _, p := range slices.Compact(slices.Sorted(slices.Values(assemblyPlatforms))) {
		goos, goarch, _ := strings.Cut(p, "/")
		cmd := exec.Command("go", "list", "-e", "-deps", "-f", "{{.ImportPath}}\t{{if .SFiles}}asm{{end}}\t{{join .Deps \" \"}}", "std")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "GOFLAGS=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list std for %s: %v\n%s", p, err, stderr.Bytes())
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(line, "\t")
			if len(f) != 3 {
				continue
			}
			ip := f[0]
			if f[1] == "asm" {
				asm[ip] = true
			}
			if exported(ip) {
				deps[ip] = append(deps[ip], strings.Fields(f[2])...)
			}
		}
	}
	unseen := map[string]bool{}
	for _, ip := range slices.Sorted(maps.Keys(asm)) {
		c, ok := stdAssembly[ip]
		switch {
		case !ok:
			t.Errorf("%s has assembly and gate_asm_test.go has not classified it: read its .s files; if it can write memory a caller hands it, "+
				"classify it unseen (and put it in an unseenWriters tree), else say why not", ip)
		case c.unseen:
			unseen[ip] = true
			if _, ok := unseenTree(ip); !ok {
				t.Errorf("%s's assembly writes memory unseen (%s), and no unseenWriters tree in gate_allow.go holds it", ip, c.why)
			}
		}
	}
	for ip := range stdAssembly {
		if !asm[ip] {
			t.Errorf("stdAssembly classifies %s, which has no assembly on %v: remove it", ip, assemblyPlatforms)
		}
	}
	for _, ip := range slices.Sorted(maps.Keys(deps)) {
		var via string
		for _, d := range append([]string{ip}, deps[ip]...) {
			if unseen[d] {
				via = d
				break
			}
		}
		_, vetted := handsNoCallerMemory[ip]
		switch {
		case via == "":
			if vetted {
				t.Errorf("handsNoCallerMemory vets %s, which uses no unseen assembly: remove it", ip)
			}
		case vetted:
		default:
			if _, ok := unseenTree(ip); ok {
				continue
			}
			if _, ok := restricted[ip]; ok {
				continue
			}
			if hidesWrites(ip, nil, deps[ip]) == "" {
				t.Errorf("%s uses %s, whose assembly writes memory unseen, and the gate would not restrict it: "+
					"put %s's tree in unseenWriters, or vet %s in handsNoCallerMemory", ip, via, via, ip)
			}
		}
	}
	for ip := range handsNoCallerMemory {
		if _, ok := deps[ip]; !ok {
			t.Errorf("handsNoCallerMemory vets %s, which is no exported standard package", ip)
		}
	}
}

// exported reports whether a standard package can be imported from outside
// the standard library.
func exported(ip string) bool {
	if strings.HasPrefix(ip, "vendor/") || strings.HasPrefix(ip, "cmd/") {
		return false
	}
	for _, e := range strings.Split(ip, "/") {
		if e == "internal" {
			return false
		}
	}
	return true
}
