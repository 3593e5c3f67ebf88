package webtest

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"serverlab/tests/judge"
	"serverlab/tests/testkit"
	"serverlab/tools/given/lab"
)

// FuzzResolve is the fuzz target of exercise 6.2: whatever the URI, Resolve
// returns (it never panics, and never blocks, not even on the named pipe in
// the root), refuses with 400, 403 or 404 only, and what it opens is a
// regular file under the document root — the same file (device and inode) as
// one found by walking the root, never the secret next to it, whatever
// mixture of "..", percent-escapes, slashes and symbolic links the URI uses.
func FuzzResolve(f *testing.F, impl Impl) {
	root, inside, secret := fuzzSite(f)
	for _, seed := range []string{
		"/a.txt", "/", "/sub/", "/sub/b.html", "/a.txt?x=1&y=%20", "/%2541.txt", "/link-in", "/fifo", "/dir",
		"/../outside/secret.txt", "/sub/../../outside/secret.txt", "/%2e%2e/outside/secret.txt",
		"/sub/%2e%2e/a.txt", "/..%2foutside/secret.txt", "//etc/hostname", "/%2fetc/hostname",
		"/link-out", "/dirlink-out/secret.txt", "/%zz", "/a%00.txt", "http://x/../outside/secret.txt", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		got, err := impl.Resolve(root, uri)
		if errors.Is(err, lab.ErrNotImplemented) {
			t.Skip("Docroot.Open is not implemented yet")
		}
		if err != nil {
			if code := impl.Status(err); code != 400 && code != 403 && code != 404 {
				t.Fatalf("Resolve(%q): error %v has status %d; want 400, 403 or 404", uri, err, code)
			}
			return
		}
		if rel, err := filepath.Rel(root, got.Path); err != nil || !filepath.IsLocal(rel) {
			t.Fatalf("Resolve(%q) = %+v: the path is not under the root %s", uri, got, root)
		}
		if got.Info == nil || !got.Info.Mode().IsRegular() {
			t.Fatalf("Resolve(%q) opened something that is not a regular file: %+v", uri, got)
		}
		if judge.SameFile(got.Info, secret) {
			t.Fatalf("Resolve(%q) opened the secret file OUTSIDE the root (%+v)", uri, got)
		}
		for _, fi := range inside {
			if judge.SameFile(got.Info, fi) {
				return
			}
		}
		t.Fatalf("Resolve(%q) = %+v: the open file is none of the files under the root", uri, got)
	})
}

// fuzzSite builds a small document root with the traps of the Paths check
// (links out, a folder, a named pipe) and returns it, the regular files that
// can be reached inside it, and the secret outside it.
func fuzzSite(f *testing.F) (root string, inside []fs.FileInfo, secret fs.FileInfo) {
	base := testkit.TempDir(f)
	root, outside := filepath.Join(base, "www"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "sub"), filepath.Join(root, "dir")} {
		fuzzMust(f, testkit.MkdirAll(d, 0o755))
	}
	for name, content := range map[string]string{
		"index.html": "<h1>index</h1>\n", "a.txt": "hello\n", "%41.txt": "percent\n",
		"sub/index.html": "<h1>sub</h1>\n", "sub/b.html": "<p>b</p>\n",
	} {
		fuzzMust(f, testkit.WriteFile(filepath.Join(root, filepath.FromSlash(name)), []byte(content), 0o644))
	}
	fuzzMust(f, testkit.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET\n"), 0o644))
	fuzzMust(f, testkit.Symlink("a.txt", filepath.Join(root, "link-in")))
	fuzzMust(f, testkit.Symlink("../outside/secret.txt", filepath.Join(root, "link-out")))
	fuzzMust(f, testkit.Symlink("../outside", filepath.Join(root, "dirlink-out")))
	if err := mkfifo(filepath.Join(root, "fifo")); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		f.Fatal(err)
	}
	fuzzMust(f, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, err := testkit.Stat(path)
			if err == nil && !strings.Contains(path, "outside") {
				inside = append(inside, fi)
			}
		}
		return err
	}))
	secret, err := testkit.Stat(filepath.Join(outside, "secret.txt"))
	fuzzMust(f, err)
	return root, inside, secret
}

func fuzzMust(f *testing.F, err error) {
	f.Helper()
	if err != nil {
		f.Fatalf("fuzz setup: %v", err)
	}
}
