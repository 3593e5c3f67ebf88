package webtest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"

	"serverlab/tests/testkit"
	"serverlab/tests/webtest/cgiprog"
)

// site is a document root built for one check, with a folder next to it
// that no request may reach.
type site struct {
	root    string
	outside string
	files   map[string][]byte // static files by name under root
}

// Sizes of the files the scheduling checks tell apart.
const (
	smallSize  = 100
	mediumSize = 10 << 10
	largeSize  = 100 << 10
	hugeSize   = 32 << 20 // sparse: costs no disk
)

// newSite builds the document root every check uses:
//
//	index.html a.txt page.html pic.gif pic.jpg data.png noext empty.txt
//	bin.dat (binary) "space name.txt" small.txt medium.txt large.txt
//	huge.bin (32 MiB, sparse) sub/index.html sub/b.html dir/ (no index)
//	link-in → a.txt, link-out → ../outside/secret.txt, dirlink-out → ../outside
func newSite(k *testkit.T) *site {
	k.Helper()
	base := k.TempDir()
	s := &site{root: filepath.Join(base, "www"), outside: filepath.Join(base, "outside"), files: map[string][]byte{}}
	for _, d := range []string{s.root, s.outside, filepath.Join(s.root, "sub"), filepath.Join(s.root, "dir")} {
		must(k, testkit.MkdirAll(d, 0o755))
	}
	rng := rand.New(rand.NewPCG(6, 6))
	text := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = "abcdefghij\n"[rng.IntN(11)]
		}
		return b
	}
	binary := make([]byte, 4096)
	for i := range binary {
		binary[i] = byte(rng.IntN(256))
	}
	for name, content := range map[string][]byte{
		"index.html":     []byte("<h1>index</h1>\n"),
		"a.txt":          []byte("hello, world\n"),
		"page.html":      []byte("<p>a page</p>\n"),
		"pic.gif":        []byte("GIF89a not really"),
		"pic.jpg":        []byte("\xff\xd8\xff not really"),
		"data.png":       []byte("\x89PNG served as text/plain"),
		"noext":          []byte("no extension"),
		"empty.txt":      {},
		"pic.gif.txt":    []byte("a text file whose name holds .gif\n"),
		"html.jpg":       []byte("a picture whose name holds html\n"),
		"bin.dat":        binary,
		"space name.txt": []byte("a name with a space"),
		"small.txt":      text(smallSize),
		"medium.txt":     text(mediumSize),
		"large.txt":      text(largeSize),
		"sub/index.html": []byte("<h1>sub index</h1>\n"),
		"sub/b.html":     []byte("<p>b</p>\n"),
	} {
		s.write(k, name, content)
	}
	must(k, testkit.WriteFile(filepath.Join(s.outside, "secret.txt"), []byte("SECRET: outside the root\n"), 0o644))
	huge, err := testkit.Create(filepath.Join(s.root, "huge.bin"))
	must(k, err)
	must(k, huge.Truncate(hugeSize))
	must(k, huge.Close())
	must(k, testkit.Symlink("a.txt", filepath.Join(s.root, "link-in")))
	must(k, testkit.Symlink("../outside/secret.txt", filepath.Join(s.root, "link-out")))
	must(k, testkit.Symlink("../outside", filepath.Join(s.root, "dirlink-out")))
	return s
}

// write adds a static file to the site.
func (s *site) write(k *testkit.T, name string, content []byte) {
	k.Helper()
	must(k, testkit.WriteFile(filepath.Join(s.root, filepath.FromSlash(name)), content, 0o644))
	s.files[name] = content
}

// sized adds n files of distinct sizes, named sized-<size>.txt, and returns
// their names in a shuffled order.
func (s *site) sized(k *testkit.T, n int) []string {
	k.Helper()
	rng := rand.New(rand.NewPCG(uint64(n), 60))
	var names []string
	for _, size := range rng.Perm(n) {
		size = 200 + 37*size
		name := fmt.Sprintf("sized-%d.txt", size)
		s.write(k, name, bytes.Repeat([]byte("s"), size))
		names = append(names, name)
	}
	return names
}

// cgi installs one of the suite's CGI programs (see package cgiprog) under
// name, which must say which one ("spin", "env", "slow", "flood") and end in
// ".cgi".
func (s *site) cgi(k *testkit.T, name string) {
	k.Helper()
	dir := filepath.Join(s.root, filepath.Dir(name))
	must(k, testkit.MkdirAll(dir, 0o755))
	if _, err := cgiprog.Install(dir, filepath.Base(name)); err != nil {
		k.Fatalf("test setup: installing the CGI program %s: %v", name, err)
	}
}

// path is name's path on disk.
func (s *site) path(name string) string {
	return filepath.Join(s.root, filepath.FromSlash(name))
}

func must(k *testkit.T, err error) {
	k.Helper()
	if err != nil {
		k.Fatalf("test setup: %v", err)
	}
}
