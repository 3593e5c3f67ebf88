package testkit

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestScratchLinksAreNotFollowed is the finding this file's functions answer:
// a subject replaced users.txt in the shared scratch folder with a symbolic
// link to a file outside it, and the judge read that file and printed it in a
// failure's "got:" line (and appended to it). Through testkit, every such
// access fails and the outside file is neither read nor changed.
func TestScratchLinksAreNotFollowed(t *testing.T) {
	outsideDir := t.TempDir() // not a scratch folder: the instructor's files
	secret := filepath.Join(outsideDir, "token.txt")
	const token = "INSTRUCTOR-PRIVATE: ghp_0123456789\n"
	if err := os.WriteFile(secret, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := TempDir(t)
	users := filepath.Join(dir, "users.txt")
	if err := os.Symlink(secret, users); err != nil { // what the subject does
		t.Fatal(err)
	}
	if err := os.Symlink(outsideDir, filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../"+filepath.Base(outsideDir), filepath.Join(dir, "rel")); err != nil {
		t.Fatal(err)
	}

	for _, path := range []string{users, filepath.Join(dir, "sub", "token.txt"), filepath.Join(dir, "rel", "token.txt"),
		filepath.Join(dir, "..", filepath.Base(outsideDir), "token.txt")} {
		if b, err := ReadFile(path); err == nil || strings.Contains(string(b), "INSTRUCTOR") {
			t.Errorf("ReadFile(%s), a link out of the scratch folder\n  want: an error and no content\n   got: %q, %v",
				path, b, err)
		}
		if err := AppendFile(path, []byte("appended\n"), 0o600); err == nil {
			t.Errorf("AppendFile(%s), a link out of the scratch folder: want an error, got none", path)
		}
		if err := WriteFile(path, []byte("written\n"), 0o600); err == nil {
			t.Errorf("WriteFile(%s), a link out of the scratch folder: want an error, got none", path)
		}
		if _, err := Stat(path); err == nil {
			t.Errorf("Stat(%s), a link out of the scratch folder: want an error, got none", path)
		}
		if err := Truncate(path, 0); err == nil {
			t.Errorf("Truncate(%s), a link out of the scratch folder: want an error, got none", path)
		}
	}
	if got, err := os.ReadFile(secret); err != nil || string(got) != token {
		t.Fatalf("the file outside the scratch folder changed\n  want: %q\n   got: %q, %v", token, got, err)
	}
	if target, err := Readlink(users); err != nil || target != secret {
		t.Errorf("Readlink(%s): want %q (the link's text, not followed), got %q, %v", users, secret, target, err)
	}
	// Removing or renaming the link touches the link, never its target.
	if err := Rename(users, filepath.Join(dir, "users.old")); err != nil {
		t.Errorf("Rename of the link: %v", err)
	}
	if err := Remove(filepath.Join(dir, "users.old")); err != nil {
		t.Errorf("Remove of the link: %v", err)
	}
	if _, err := os.Stat(secret); err != nil {
		t.Errorf("removing a link in the scratch folder removed its target: %v", err)
	}
}

// TestScratchFolderReplaced: the root was opened when the folder was made, so
// a subject that renames the folder away and puts a link to elsewhere in its
// place does not move what the judge reads and writes.
func TestScratchFolderReplaced(t *testing.T) {
	outsideDir := t.TempDir()
	dir := TempDir(t)
	if err := WriteFile(filepath.Join(dir, "users.txt"), []byte("alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	moved := dir + ".moved"
	if err := os.Rename(dir, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Rename(moved, dir) }) // so that TempDir's cleanup finds it
	if err := os.Symlink(outsideDir, dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(dir) })
	if err := WriteFile(filepath.Join(dir, "users.txt"), []byte("bob\n"), 0o600); err != nil {
		t.Fatalf("WriteFile in the (moved) scratch folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outsideDir, "users.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a write through a scratch folder replaced by a link reached the link's target (stat: %v)", err)
	}
	if b, err := os.ReadFile(filepath.Join(moved, "users.txt")); err != nil || string(b) != "bob\n" {
		t.Errorf("the write went to the folder the check made: want %q there, got %q, %v", "bob\n", b, err)
	}
}

// TestScratchRefusesOtherPaths: a path in no scratch folder is refused, not
// opened as os would.
func TestScratchRefusesOtherPaths(t *testing.T) {
	plain := filepath.Join(t.TempDir(), "f.txt") // testing's folder, not testkit's
	if err := os.WriteFile(plain, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{plain, "relative.txt", "/etc/passwd"} {
		if _, err := ReadFile(path); !errors.Is(err, ErrNotScratch) {
			t.Errorf("ReadFile(%q): want ErrNotScratch, got %v", path, err)
		}
	}
	var dir string
	t.Run("check", func(t *testing.T) { dir = TempDir(t) })
	if err := WriteFile(filepath.Join(dir, "late.txt"), nil, 0o600); !errors.Is(err, ErrNotScratch) {
		t.Errorf("WriteFile in the folder of a check that ended: want ErrNotScratch, got %v", err)
	}
}

// TestScratchFiles exercises the rest of the helpers on ordinary files.
func TestScratchFiles(t *testing.T) {
	dir := TempDir(t)
	p := func(name string) string { return filepath.Join(dir, name) }
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(MkdirAll(p("a/b"), 0o755))
	must(Mkdir(p("c"), 0o755))
	must(WriteFile(p("a/b/f"), []byte("one\n"), 0o600))
	must(AppendFile(p("a/b/f"), []byte("two\n"), 0o600))
	must(Link(p("a/b/f"), p("c/g")))
	must(Symlink("../a/b/f", p("c/in")))
	if b, err := ReadFile(p("c/in")); err != nil || string(b) != "one\ntwo\n" {
		t.Errorf("ReadFile through a link inside the folder: got %q, %v", b, err)
	}
	must(Truncate(p("c/g"), 4))
	if fi, err := Stat(p("a/b/f")); err != nil || fi.Size() != 4 {
		t.Errorf("Stat after Truncate of a hard link: want size 4, got %v, %v", fi, err)
	}
	if fi, err := Lstat(p("c/in")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat of a link: want a link, got %v, %v", fi, err)
	}
	must(Chmod(p("c/g"), 0o644))
	f, err := Create(p("c/new"))
	must(err)
	must(f.Close())
	entries, err := ReadDir(p("c"))
	must(err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"g", "in", "new"}; !slices.Equal(names, want) {
		t.Errorf("ReadDir: want %v (sorted), got %v", want, names)
	}
	if runtime.GOOS != "windows" {
		if err := Mkfifo(p("c/fifo"), 0o600); err != nil {
			t.Errorf("Mkfifo: %v", err)
		} else if fi, err := Lstat(p("c/fifo")); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("Mkfifo made %v, %v; want a named pipe", fi, err)
		}
		must(Symlink(t.TempDir(), p("out")))
		if err := Mkfifo(p("out/fifo"), 0o600); err == nil {
			t.Errorf("Mkfifo through a link out of the folder: want an error, got none")
		}
	}
	must(RemoveAll(p("a")))
	if _, err := Stat(p("a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat after RemoveAll: want ErrNotExist, got %v", err)
	}
}

// fileAccess lists, by import path, the functions that reach a file by its
// path. In a suite, such a path is usually in the scratch folder the subject
// writes, where a symbolic link can lead anywhere: the suites use this
// package's confined versions instead (files.go).
var fileAccess = map[string][]string{
	"os": {"ReadFile", "WriteFile", "OpenFile", "Open", "Create", "Stat", "Lstat", "Remove", "RemoveAll", "Rename",
		"Truncate", "Chmod", "Chown", "Lchown", "Chtimes", "Symlink", "Link", "Readlink", "Mkdir", "MkdirAll",
		"MkdirTemp", "CreateTemp", "ReadDir", "DirFS", "OpenRoot", "OpenInRoot", "CopyFS"},
	"io/ioutil": {"*"},
	"syscall": {"Open", "Openat", "Creat", "Mkfifo", "Mknod", "Unlink", "Rename", "Link", "Symlink", "Mkdir", "Rmdir",
		"Truncate", "Stat", "Lstat", "Chmod", "Readlink", "Chdir"},
	"golang.org/x/sys/unix": {"Open", "Openat", "Openat2", "Creat", "Mkfifo", "Mkfifoat", "Mknod", "Mknodat", "Unlink",
		"Unlinkat", "Rename", "Renameat", "Renameat2", "Link", "Linkat", "Symlink", "Symlinkat", "Mkdir", "Mkdirat",
		"Rmdir", "Truncate", "Stat", "Lstat", "Fstatat", "Chmod", "Fchmodat", "Readlink", "Readlinkat", "Chdir"},
	"path/filepath":                   {"Walk", "WalkDir", "EvalSymlinks"},
	"database/sql":                    {"Open"},
	"serverlab/tools/given/users":     {"Load", "OpenAppend", "NewCache"},
	"serverlab/tools/given/stockfile": {"Save", "CleanTemps", "Read"},
	"serverlab/tools/given/filelock":  {"Open"},
}

// fileAccessAllowed are the calls of fileAccess that may stay, keyed by
// "file (relative to tests/): function: package.Name", each with its reason.
// The few reasons there are: the path is in /proc or /dev, which the subject
// cannot plant a link in; or the code runs as the subject, not the judge.
var fileAccessAllowed = map[string]string{
	// /proc and /dev: the kernel's files, not the scratch folder.
	"chattest/login.go: readBytes: os.ReadFile":                   "/proc/PID/io of the subject",
	"chattest/writecalls.go: writeCalls: os.ReadFile":             "/proc/PID/io of the subject",
	"chatcoretest/backpressure.go: kernelSendBuffer: os.ReadFile": "/proc/sys, a sysctl",
	"chatcoretest/edges.go: checkKeepAlive: os.Stat":              "/proc/net/tcp",
	"chatcoretest/edges.go: tcpTimer: os.Open":                    "/proc/net/tcp",
	"chatscaletest/cpu.go: demand: os.ReadFile":                   "/proc/PID/task/*/schedstat of the subject",
	"webtest/cgi.go: reaped: os.ReadFile":                         "/proc/PID/stat",
	"webtest/robust.go: openFDs: os.ReadDir":                      "/proc/PID/fd of the subject",
	"webtest/robust.go: openFDs: os.Readlink":                     "/proc/PID/fd/N: the link's text, never followed",
	"testkit/busy.go: LoadAverage: os.ReadFile":                   "/proc/loadavg",
	"testkit/stubs.go: readSource: os.Open":                       "the chapter's own Go files, regular files only (Lstat), for a note's text",
	"testkit/stubs.go: readSource: os.Lstat":                      "the chapter's own Go files: is it a regular file (not a link)",
	"testkit/busy.go: procSched: os.ReadFile":                     "/proc/PID/task/*/schedstat",
	"testkit/socket.go: sysctlField: os.ReadFile":                 "/proc/sys, a sysctl",
	"testkit/footprint.go: ReadFootprint: os.ReadDir":             "/proc/PID/fd of the subject",
	"testkit/proc.go: HostPID: os.Readlink":                       "/proc/PID/ns/pid: the link's text",
	"testkit/proc.go: HostPID: os.ReadDir":                        "/proc",
	"testkit/proc.go: nsPIDs: os.ReadFile":                        "/proc/PID/status",
	"epolltest/helpers.go: cpuDemand: os.ReadDir":                 "/proc/PID/task of the subject",
	"epolltest/helpers.go: cpuDemand: os.ReadFile":                "/proc/PID/task/N/schedstat of the subject",
	"epolltest/helpers.go: openFDs: os.ReadDir":                   "/proc/PID/fd of the subject",
	"epolltest/helpers.go: openFDs: os.Readlink":                  "/proc/PID/fd/N: the link's text, never followed",
	"epolltest/helpers.go: subjectCPU: os.ReadFile":               "/proc/PID/stat of the subject",
	"epolltest/loop.go: exhaustOwnFDs: os.Open":                   "os.DevNull",
	"epolltest/edges.go: interruptThreads: os.ReadDir":            "/proc/PID/task",
	"judge/socketid_unix.go: startupEnv: os.ReadFile":             "/proc/self/environ",
	"judge/fds_unix.go: exhaustFDs: os.Open":                      "os.DevNull",
	// Code that runs as the subject (a CGI program its server starts), or
	// that only creates, never follows, a name.
	"webtest/cgiprog/cgiprog.go: parentPID: os.ReadFile": "runs as the subject: the CGI program reads its own /proc/self/stat",
	"webtest/cgiprog/cgiprog.go: selfPID: os.Readlink":   "runs as the subject: /proc/self",
	"webtest/cgiprog/cgiprog.go: childPID: os.ReadDir":   "runs as the subject: /proc",
	"webtest/cgiprog/cgiprog.go: childPID: os.ReadFile":  "runs as the subject: /proc/PID/status",
	"webtest/cgiprog/cgiprog.go: Install: os.Link":       "link(2) never follows newpath; callers outside the suites (tools/cmd/bench) install where no subject writes",
	"webtest/cgiprog/cgiprog.go: copyFile: os.Open":      "the running test binary (os.Executable), which the subject cannot write",
	"webtest/cgiprog/cgiprog.go: copyFile: os.OpenFile":  "O_CREATE|O_EXCL never follows a link at the final name",
	"webtest/fuzz.go: fuzzSite: filepath.WalkDir":        "WalkDir follows no symbolic link; each file it finds is then read with testkit.Stat",
	"chatcoretest/helpers.go: openDB: sql.Open":          "SQLite opens by path (left: it would follow a link at chat.db)",
	"chatcoretest/edges.go: fill: sql.Open":              "SQLite opens by path (left: it would follow a link at chat.db)",
	"testkit/files_linux.go: Mkfifo: unix.Mkfifoat":      "the helper itself: mkfifoat relative to a folder opened through the root",
	"testkit/files_unixother.go: Mkfifo: syscall.Mkfifo": "the helper itself, where there is no mkfifoat (not Linux, so no grader's sandbox)",
	"testkit/files.go: TempDir: os.OpenRoot":             "the helper itself: the root every access goes through",
}

// TestSuitesUseScratchFiles: no Go file under tests/ (the suites, testkit,
// the judge) reaches a file by its path except through files.go's functions
// or an entry of fileAccessAllowed, so a check written tomorrow cannot bring
// back the judge that follows the subject's links.
func TestSuitesUseScratchFiles(t *testing.T) {
	fset := token.NewFileSet()
	seen := map[string]bool{}
	var bad []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, ".."+string(filepath.Separator)))
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		imports := map[string]string{} // name in the file → import path
		for _, spec := range f.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if spec.Name != nil {
				name = spec.Name.Name
			}
			imports[name] = p
		}
		for _, decl := range f.Decls {
			fn := "(top level)"
			if fd, ok := decl.(*ast.FuncDecl); ok {
				fn = fd.Name.Name
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				pkg, ok := sel.X.(*ast.Ident)
				if !ok || pkg.Obj != nil {
					return true
				}
				names, ok := fileAccess[imports[pkg.Name]]
				if !ok || !slices.Contains(names, sel.Sel.Name) && !slices.Contains(names, "*") {
					return true
				}
				key := rel + ": " + fn + ": " + pkg.Name + "." + sel.Sel.Name
				seen[key] = true
				if _, ok := fileAccessAllowed[key]; !ok {
					bad = append(bad, fset.Position(sel.Pos()).String()+": "+key)
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("%d file accesses by path in tests/ that a subject could redirect with a symbolic link in the "+
			"scratch folder:\n  %s\nuse testkit.ReadFile, WriteFile, OpenFile, … (tests/testkit/files.go) on a "+
			"folder made by k.TempDir or testkit.TempDir; a path the subject cannot write (/proc, /dev) goes in "+
			"fileAccessAllowed with its reason", len(bad), strings.Join(bad, "\n  "))
	}
	for key, why := range fileAccessAllowed {
		if why == "" {
			t.Errorf("fileAccessAllowed[%q] gives no reason", key)
		}
		if !seen[key] {
			t.Errorf("fileAccessAllowed[%q] matches no call any more: remove it", key)
		}
	}
}
