package grade

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"serverlab/tools/internal/rubric"
)

// gateTree runs the gate over tree/NN of the course (the maintainers' tree),
// returning its refusals, its notes and what of the allow-list it used.
func gateTree(t *testing.T, root string, ch rubric.Chapter, tree string) (refusals, notes []Hit, used map[string]bool) {
	t.Helper()
	hits, used, err := gateWithUse(context.Background(), root, "serverlab", tree+"/"+ch.ID, ch, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if teachOnly[h.Rule] {
			notes = append(notes, h)
		} else {
			refusals = append(refusals, h)
		}
	}
	return refusals, notes, used
}

// The course's own solutions and starters (the guided ones, their cmd/ and
// the open track's in testdata/open) pass the gate: the allow-list is
// derived from them. Every entry of the allow-list is used by some of them,
// so that it cannot keep what no chapter needs.
func TestGatePassesTheCourse(t *testing.T) {
	r, err := rubric.Load()
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../../..")
	// The student release has no solutions/: what the list is derived from
	// is the maintainers' to check.
	_, err = os.Stat(filepath.Join(root, "solutions"))
	derive := err == nil
	for _, ch := range r.Chapters {
		used := map[string]bool{}
		for _, tree := range []string{"solutions", "chapters"} {
			start := time.Now()
			refusals, _, u := gateTree(t, root, ch, tree)
			t.Logf("%s/%s: %v", tree, ch.ID, time.Since(start).Round(time.Millisecond))
			for _, h := range refusals {
				t.Errorf("%s/%s: %s", tree, ch.ID, h)
			}
			maps.Copy(used, u)
		}
		for _, e := range chapterAllow[ch.ID] {
			if derive && !used[e] {
				t.Errorf("gate_allow.go: chapter %s allows %s, which neither solutions/%s nor chapters/%s uses: remove it", ch.ID, e, ch.ID, ch.ID)
			}
		}
	}
}

func TestScreenRulesMatchRubric(t *testing.T) {
	if !slices.Equal(screenRules, rubric.Rules) {
		t.Errorf("screen.go's rules %q and rubric.Rules %q differ", screenRules, rubric.Rules)
	}
}

// gateWithUse is gateChapter for tests: it also returns the allow-list's
// entries the tree used.
func gateWithUse(ctx context.Context, root, module, chapterDir string, spec rubric.Chapter, replace map[string]string) ([]Hit, map[string]bool, error) {
	g := newGate(root, module, chapterDir, spec)
	if err := g.run(ctx, replace, nil); err != nil {
		return nil, nil, err
	}
	return g.hits, g.used, nil
}

// gateRoot is a module root for the gate's tests: the course's go.mod and
// go.sum, its given wire codec, and files (path → source) under chapters/.
func gateRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	copyFile := func(from, to string) {
		b, err := os.ReadFile(filepath.Join("../../..", from))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, to), string(b))
	}
	copyFile("go.mod", "go.mod")
	copyFile("go.sum", "go.sum")
	given, _ := filepath.Glob("../../../tools/given/wire/*.go")
	for _, f := range given {
		copyFile("tools/given/wire/"+filepath.Base(f), "tools/given/wire/"+filepath.Base(f))
	}
	for name, src := range files {
		writeFile(t, filepath.Join(root, "chapters", filepath.FromSlash(name)), src)
	}
	return root
}

func writeFile(t *testing.T, p, src string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGateRefuses: each case is a small tree that must be refused where it
// says, or (want "") pass.
func TestGateRefuses(t *testing.T) {
	forbid := rubric.Screen{Forbid: []rubric.Forbid{{Ref: "serverlab/tools/given/wire.ReadFrame", Exercises: []string{"1.1"}}}}
	tests := []struct {
		name, ch string
		files    map[string]string
		want     string // "file:line: prefix of the refusal", "" for none
	}{
		{"reflect, aliased", "03", map[string]string{"03/a.go": "package p\n\nimport r \"reflect\"\n\nvar _ = r.ValueOf\n"},
			"03/a.go:3: chapter 03's code needs no reflect"},
		{"the race detector's hooks", "03", map[string]string{"03/a.go": "package p\n\nimport \"runtime\"\n\nfunc f(p any) { runtime.RaceAcquire(nil) }\n"},
			"03/a.go:5: chapter 03's code needs no runtime.RaceAcquire"},
		{"syscall.Exec where Kill is allowed", "06", map[string]string{"06/a.go": "package p\n\nimport \"syscall\"\n\nvar _ = syscall.Kill\n\nfunc f() { syscall.Exec(\"x\", nil, nil) }\n"},
			"06/a.go:7: chapter 06's code needs no syscall.Exec"},
		{"syscall.Kill in 06", "06", map[string]string{"06/a.go": "package p\n\nimport \"syscall\"\n\nfunc f() error { return syscall.Kill(0, syscall.SIGKILL) }\n"}, ""},
		{"an aliased import", "06", map[string]string{"06/a.go": "package p\n\nimport s \"syscall\"\n\nfunc f() { s.Exec(\"x\", nil, nil) }\n"},
			"06/a.go:5: chapter 06's code needs no syscall.Exec"},
		{"a shadowed package name is not the package", "06", map[string]string{"06/a.go": "package p\n\nimport \"syscall\"\n\ntype x struct{}\n\nfunc (x) Exec() {}\n\nvar _ = syscall.Kill\n\nfunc f() { syscall := x{}; syscall.Exec() }\n"}, ""},
		{"a dot import", "07", map[string]string{"07/a.go": "package p\n\nimport . \"syscall\"\n\nfunc f() { Exec(\"x\", nil, nil) }\n"},
			"07/a.go:3: dot import of \"syscall\""},
		{"a method value through a type alias", "06", map[string]string{"06/a.go": "package p\n\nimport \"os/exec\"\n\ntype C = exec.Cmd\n\nfunc f(c *C) any { return c.ExtraFiles }\n"},
			"06/a.go:7: chapter 06's code needs no exec.Cmd.ExtraFiles"},
		{"a method expression", "06", map[string]string{"06/a.go": "package p\n\nimport \"os/exec\"\n\nvar _ = (*exec.Cmd).Output\n"},
			"06/a.go:5: chapter 06's code needs no exec.Cmd.Output"},
		{"a field promoted through an embedded type", "06", map[string]string{"06/a.go": "package p\n\nimport \"os/exec\"\n\ntype my struct{ *exec.Cmd }\n\nfunc f(m my) any { return m.ExtraFiles }\n"},
			"06/a.go:7: chapter 06's code needs no exec.Cmd.ExtraFiles"},
		{"a struct literal's field", "06", map[string]string{"06/a.go": "package p\n\nimport \"syscall\"\n\nvar _ = &syscall.SysProcAttr{\n\tPtrace: true,\n}\n"},
			"06/a.go:5: chapter 06's code needs no syscall.SysProcAttr.Ptrace"},
		{"a refused type inferred inside a generic body", "01", map[string]string{"01/a.go": "package p\n\nimport \"net\"\n\nfunc ctl[T interface{ Control(func(uintptr)) error }](c interface{ SyscallConn() (T, error) }) uintptr {\n\tvar fd uintptr\n\tif rc, err := c.SyscallConn(); err == nil {\n\t\trc.Control(func(f uintptr) { fd = f })\n\t}\n\treturn fd\n}\n\nfunc raw(c *net.TCPConn) uintptr { return ctl(c) }\n"},
			"01/a.go:13: chapter 01's code needs no syscall.RawConn: a generic function"},
		{"a generic function of ordinary types", "01", map[string]string{"01/a.go": "package p\n\nimport \"slices\"\n\nfunc f(s []int) { slices.Sort(s) }\n"}, ""},
		{"an unkeyed struct literal's field", "06", map[string]string{"06/a.go": "package p\n\nimport \"syscall\"\n\nvar _ = &syscall.SysProcAttr{\"\", nil, false, true}\n"},
			"06/a.go:5: chapter 06's code needs no syscall.SysProcAttr.Setsid"},
		{"os.NewFile in an init", "05", map[string]string{"05/a.go": "package p\n\nimport \"os\"\n\nfunc init() { os.NewFile(3, \"judge\") }\n"},
			"05/a.go:5: no chapter needs os.NewFile"},
		{"unsafe", "05", map[string]string{"05/a.go": "package p\n\nimport \"unsafe\"\n\nvar _ = unsafe.Sizeof(0)\n"},
			"05/a.go:3: chapter 05's code needs no unsafe"},
		{"a datagram read, whose buffer the kernel fills unseen", "03", map[string]string{"03/a.go": "package p\n\nimport \"net\"\n\nfunc f(c *net.UDPConn, b []byte) { c.ReadFromUDP(b) }\n"},
			"03/a.go:5: no chapter needs net.UDPConn.ReadFromUDP"},
		{"a datagram read through the interface", "03", map[string]string{"03/a.go": "package p\n\nimport \"net\"\n\nfunc f(c net.PacketConn, b []byte) { c.ReadFrom(b) }\n"},
			"03/a.go:5: no chapter needs net.PacketConn.ReadFrom"},
		{"cgo in cmd/", "01", map[string]string{"01/cmd/x/main.go": "package main\n\n// #include \"/etc/shadow\"\nimport \"C\"\n\nfunc main() {}\n"},
			"01/cmd/x/main.go:4: chapter 01 is written in Go alone"},
		{"assembly", "01", map[string]string{"01/a.go": "package p\n\nfunc f()\n", "01/a_amd64.s": "TEXT ·f(SB),0,$0\n"},
			"01/a_amd64.s:1: chapter 01 is written in Go alone"},
		{"linkname", "01", map[string]string{"01/a.go": "package p\n\nimport _ \"unsafe\"\n\n//go:linkname x serverlab/tests/testkit.record\nvar x int\n"},
			"01/a.go:5: chapter 01 needs no //go:linkname"},
		{"norace", "01", map[string]string{"01/a.go": "package p\n\n//go:norace\nfunc f() {}\n"},
			"01/a.go:3: chapter 01 needs no //go:norace"},
		{"the codec 1.1 writes, from cmd/", "01", map[string]string{"01/cmd/x/main.go": "package main\n\nimport \"serverlab/tools/given/wire\"\n\nvar _ = wire.ReadFrame\n\nfunc main() {}\n"},
			"01/cmd/x/main.go:5: wire.ReadFrame is the course's"},
		{"the suites", "01", map[string]string{"01/a.go": "package p\n\nimport _ \"serverlab/tests/testkit\"\n"},
			"01/a.go:3: chapter 01's code may not import \"serverlab/tests/testkit\""},
		{"another chapter", "01", map[string]string{"01/a.go": "package p\n\nimport _ \"serverlab/chapters/02\"\n"},
			"01/a.go:3: chapter 01's code may not import"},
		{"a dependency of another chapter", "01", map[string]string{"01/a.go": "package p\n\nimport _ \"modernc.org/sqlite\"\n"},
			"01/a.go:3: chapter 01's code needs no \"modernc.org/sqlite\""},
		{"a file the parser refuses", "01", map[string]string{"01/a.go": "package p\n", "01/deep/d.go": "package deep\n\nvar x = " + strings.Repeat("(", 100001) + "1" + strings.Repeat(")", 100001) + "\n"},
			"01/deep/d.go:1: d.go does not parse, so the gate cannot check it"},
		{"a descriptor copied over a Unix socket", "02", map[string]string{"02/a.go": "package p\n\nimport \"net\"\n\nfunc f(c *net.UnixConn) { c.WriteMsgUnix(nil, nil, nil) }\n"},
			"02/a.go:5: no chapter needs net.UnixConn.WriteMsgUnix"},
		{"a package that starts programs", "01", map[string]string{"01/a.go": "package p\n\nimport \"net/http/cgi\"\n\nvar _ = cgi.Handler{}\n"},
			"01/a.go:3: chapter 01's code needs no net/http/cgi: it can start programs"},
		{"a never-listed method through an interface of its own", "02", map[string]string{"02/a.go": "package p\n\nimport \"net\"\n\ntype sender interface {\n\tWriteMsgUnix(b, oob []byte, addr *net.UnixAddr) (int, int, error)\n}\n\nfunc f(s sender) { s.WriteMsgUnix(nil, nil, nil) }\n"},
			"02/a.go:9: no chapter needs net.UnixConn.WriteMsgUnix, here by an interface"},
		{"a raw connection handed out by an ordinary method", "01", map[string]string{"01/a.go": "package p\n\nimport \"net\"\n\ntype ctl interface{ Control(func(fd uintptr)) error }\n\nfunc f(c *net.TCPConn) { var rc ctl; rc, _ = c.SyscallConn(); _ = rc }\n"},
			"01/a.go:7: chapter 01's code needs no (*net.TCPConn).SyscallConn: it hands out a syscall.RawConn"},
		{"a raw connection where the chapter may use it", "05", map[string]string{"05/a.go": "package p\n\nimport \"net\"\n\nfunc f(c *net.TCPConn) { rc, _ := c.SyscallConn(); rc.Control(func(uintptr) {}) }\n"}, ""},
		{"a raw connection by a generic function's inference", "01", map[string]string{"01/a.go": "package p\n\nimport \"net\"\n\nfunc rawOf[T any](c interface{ SyscallConn() (T, error) }) (T, error) { return c.SyscallConn() }\n\ntype ctl interface{ Control(func(fd uintptr)) error }\n\nfunc f(c *net.TCPConn) { var rc ctl; rc, _ = rawOf(c); _ = rc }\n"},
			"01/a.go:9: chapter 01's code needs no syscall.RawConn: a call here returns one"},
		{"assembly the race detector does not see", "01", map[string]string{"01/a.go": "package p\n\nimport \"crypto/subtle\"\n\nfunc f(d, a, b []byte) { subtle.XORBytes(d, a, b) }\n"},
			"01/a.go:5: chapter 01's code needs no subtle.XORBytes: its assembly"},
		// cheater4 #1: a racy counter copied through AES went unreported.
		{"a counter copied through AES", "03", map[string]string{"03/a.go": "package p\n\nimport \"crypto/aes\"\n\nvar b, _ = aes.NewCipher(make([]byte, 16))\n\nfunc cp(d, s []byte) { b.Encrypt(d, s) }\n"},
			"03/a.go:3: chapter 03's code needs no crypto/aes: its assembly"},
		{"a counter written by CTR", "03", map[string]string{"03/a.go": "package p\n\nimport \"crypto/cipher\"\n\nfunc f(b cipher.Block, d []byte) { cipher.NewCTR(b, make([]byte, 16)).XORKeyStream(d, d) }\n"},
			"03/a.go:3: chapter 03's code needs no crypto/cipher: its assembly"},
		{"a counter's words shared with math/big", "03", map[string]string{"03/a.go": "package p\n\nimport \"math/big\"\n\nfunc f(w []big.Word) { z := new(big.Int).SetBits(w); z.Add(z, z) }\n"},
			"03/a.go:3: chapter 03's code needs no math/big: its assembly writes"},
		{"a package that uses crypto/", "03", map[string]string{"03/a.go": "package p\n\nimport \"net/http\"\n\nvar _ = http.Get\n"},
			"03/a.go:3: chapter 03's code needs no net/http: it uses crypto/"},
		{"a package that uses math/big", "03", map[string]string{"03/a.go": "package p\n\nimport \"go/constant\"\n\nvar _ = constant.MakeInt64\n"},
			"03/a.go:3: chapter 03's code needs no go/constant: it uses math/big"},
		{"the crypto chapter 07 uses", "07", map[string]string{"07/a.go": "package p\n\nimport (\n\t\"crypto/hmac\"\n\t\"crypto/sha256\"\n)\n\nfunc f(k []byte) []byte { return hmac.New(sha256.New, k).Sum(nil) }\n"}, ""},
		{"crypto/rand.Read: the kernel fills its buffer unseen", "07", map[string]string{"07/a.go": "package p\n\nimport \"crypto/rand\"\n\nfunc f(k []byte) { rand.Read(k) }\n"},
			"07/a.go:3: chapter 07's code needs no crypto/rand"},
		{"unix.EpollWait: the kernel fills its events unseen", "05", map[string]string{"05/a.go": "package p\n\nimport \"golang.org/x/sys/unix\"\n\nfunc f(ev []unix.EpollEvent) { unix.EpollWait(0, ev, 0) }\n"},
			"05/a.go:5: no chapter needs unix.EpollWait: the kernel fills its events"},
		{"crypto chapter 07 does not use", "07", map[string]string{"07/a.go": "package p\n\nimport \"crypto/tls\"\n\nvar _ = tls.Dial\n"},
			"07/a.go:5: chapter 07's code needs no tls.Dial: its assembly"},
		{"a //line comment does not move the refusal", "01", map[string]string{"01/a.go": "package p\n\n//line other.go:100\nimport \"reflect\"\n\nvar _ = reflect.ValueOf\n"},
			"01/a.go:4: chapter 01's code needs no reflect"},
		{"a file no build here compiles", "01", map[string]string{"01/a.go": "package p\n", "01/b_windows.go": "package p\n\nimport \"reflect\"\n\nvar _ = reflect.ValueOf\n"},
			"01/b_windows.go:3: chapter 01's code needs no reflect"},
		{"an ignored generator", "01", map[string]string{"01/gen.go": "//go:build ignore\n\npackage main\n\nimport \"os/exec\"\n\nvar _ = exec.Command\n"},
			"01/gen.go:5: chapter 01's code needs no os/exec"},
		{"the same name, another type on another system", "06", map[string]string{
			"06/a_linux.go":  "package p\n\nimport \"os/exec\"\n\ntype T = exec.Cmd\n",
			"06/a_darwin.go": "package p\n\ntype T = struct{ ExtraFiles []int }\n",
			"06/b.go":        "package p\n\nfunc f(t *T) any { return t.ExtraFiles }\n"},
			"06/b.go:3: chapter 06's code needs no exec.Cmd.ExtraFiles"},
		{"a subpackage's test may use testing", "01", map[string]string{"01/a.go": "package p\n", "01/sub/s.go": "package sub\n", "01/sub/s_test.go": "package sub\n\nimport (\n\t\"reflect\"\n\t\"testing\"\n)\n\nfunc TestX(t *testing.T) { _ = reflect.DeepEqual(1, 1) }\n"}, ""},
		{"a subpackage's test may not use unsafe", "01", map[string]string{"01/a.go": "package p\n", "01/sub/s.go": "package sub\n", "01/sub/s_test.go": "package sub\n\nimport \"unsafe\"\n\nvar _ = unsafe.Sizeof(0)\n"},
			"01/sub/s_test.go:3: chapter 01's code needs no unsafe"},
		{"the chapter's own test files are the course's", "01", map[string]string{"01/a.go": "package p\n", "01/x_test.go": "package p\n\nimport \"reflect\"\n\nvar _ = reflect.ValueOf\n"}, ""},
		{"its own subpackages and the given code", "01", map[string]string{"01/a.go": "package p\n\nimport (\n\t\"serverlab/chapters/01/internal/x\"\n\t\"serverlab/tools/given/wire\"\n)\n\nvar _ = x.Y\nvar _ = wire.MaxPayload\n", "01/internal/x/x.go": "package x\n\nconst Y = 1\n"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := gateRoot(t, tt.files)
			spec := rubric.Chapter{ID: tt.ch}
			if tt.ch == "01" {
				spec.Screen = forbid
			}
			hits, err := gateChapter(context.Background(), root, "serverlab", "chapters/"+tt.ch, spec, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				if !teachOnly[h.Rule] {
					got = append(got, strings.TrimPrefix(h.String(), "chapters/"))
				}
			}
			if tt.want == "" {
				if len(got) > 0 {
					t.Errorf("refused, want it let through:\n%s", strings.Join(got, "\n"))
				}
				return
			}
			for _, g := range got {
				if strings.HasPrefix(g, tt.want) && (strings.HasSuffix(g, "("+gateTeach+")") || strings.HasSuffix(g, "("+forbidTeach+")")) {
					return
				}
			}
			t.Errorf("no refusal %q; got:\n%s", tt.want, strings.Join(got, "\n"))
		})
	}
}

// A symbolic link in the tree is refused: the go command would follow it.
func TestGateRefusesLinks(t *testing.T) {
	root := gateRoot(t, map[string]string{"01/a.go": "package p\n"})
	if err := os.Symlink("/etc", filepath.Join(root, "chapters", "01", "etc")); err != nil {
		t.Skip(err)
	}
	hits, err := gateChapter(context.Background(), root, "serverlab", "chapters/01", rubric.Chapter{ID: "01"}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || !strings.Contains(hits[0].String(), "a symbolic link (etc)") {
		t.Errorf("hits %v, want one for the link", hits)
	}
}

// A chapter folder, or chapters/ itself, that is a link to another
// checkout's is refused: the build would grade the other student's files.
func TestGateRefusesALinkedChapter(t *testing.T) {
	other := gateRoot(t, map[string]string{"01/a.go": "package p\n"})
	for _, link := range []string{"chapters", "chapters/01"} {
		root := t.TempDir()
		target := filepath.Join(other, filepath.FromSlash(link))
		if link == "chapters/01" {
			if err := os.Mkdir(filepath.Join(root, "chapters"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))); err != nil {
			t.Skip(err)
		}
		hits, err := gateChapter(context.Background(), root, "serverlab", "chapters/01", rubric.Chapter{ID: "01"}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != 1 || !strings.Contains(hits[0].String(), "a symbolic link") {
			t.Errorf("%s a link: hits %v, want one for the link", link, hits)
		}
	}
}

// The gate reads what the build compiles: a file the overlay replaces is
// checked in its replacement, one it adds is checked, one it deletes is
// not.
func TestGateSeesTheOverlay(t *testing.T) {
	root := gateRoot(t, map[string]string{
		"01/a.go": "package p\n",
		"01/c.go": "package p\n\nimport \"unsafe\"\n\nvar n = unsafe.Sizeof(0)\n",
	})
	dir := filepath.Join(root, "chapters", "01")
	repl := filepath.Join(root, "a-replacement.go")
	writeFile(t, repl, "package p\n\nimport \"reflect\"\n\nvar _ = reflect.ValueOf\n")
	added := filepath.Join(root, "b-added.go")
	writeFile(t, added, "package p\n\nimport \"plugin\"\n\nvar _ = plugin.Open\n")
	replace := map[string]string{
		filepath.Join(dir, "a.go"): repl,
		filepath.Join(dir, "b.go"): added,
		filepath.Join(dir, "c.go"): "",
	}
	hits, err := gateChapter(context.Background(), root, "serverlab", "chapters/01", rubric.Chapter{ID: "01"}, nil, replace, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, fmt.Sprintf("%s:%d", h.File, h.Line))
	}
	slices.Sort(got)
	if want := []string{"chapters/01/a.go:3", "chapters/01/b.go:3"}; !slices.Equal(got, want) {
		t.Errorf("refusals at %q, want %q", got, want)
	}
}

// Screening's rules are notes: each is found, none costs a point; -allow
// drops what it names.
func TestScreenNotes(t *testing.T) {
	tests := []struct{ name, src, rule, what string }{
		{"init", "package p\nfunc init() {}\n", ruleInit, "func init"},
		{"start-up call", "package p\nfunc open() int { return 1 }\nvar f = open()\n", ruleStartup, "a package-level initialiser calls the package's own code"},
		{"a function literal called at start-up", "package p\nvar f = func() int { return 1 }()\n", ruleStartup, "a package-level initialiser calls the package's own code"},
		{"os.Exit", "package p\nimport o \"os\"\nvar quit = o.Exit\n", ruleExit, "o.Exit"},
		{"os.Args", "package p\nimport \"os\"\nvar n = len(os.Args)\n", ruleArgs, "os.Args"},
		{"/proc", "package p\nconst self = \"/proc/self/mem\"\n", ruleProc, `the path "/proc/self/mem"`},
		{"constructors of the standard library are not start-up code", "package p\nimport (\"errors\"; \"fmt\")\nvar e = errors.New(\"x\")\nvar w = fmt.Errorf(\"y: %w\", e)\nvar b = []byte(\"x\")\n", "", ""},
		{"flag.Parse", "package p\nimport \"flag\"\nfunc f() { flag.Parse() }\n", ruleArgs, "flag.Parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := gateRoot(t, map[string]string{"01/a.go": tt.src})
			hits, err := gateChapter(context.Background(), root, "serverlab", "chapters/01", rubric.Chapter{ID: "01"}, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.rule == "" {
				if len(hits) != 0 {
					t.Errorf("notes %v, want none", hits)
				}
				return
			}
			if len(hits) != 1 || hits[0].Rule != tt.rule || hits[0].What != tt.what {
				t.Fatalf("hits %v, want one %s %q", hits, tt.rule, tt.what)
			}
			ch := &ChapterResult{Exercises: []ExerciseResult{{ID: "1.1"}}}
			if lines := screenCost(hits, ch); len(lines) != 1 || ch.Exercises[0].Cause != "" {
				t.Errorf("a note cost %s (%q)", ch.Exercises[0].Cause, lines)
			}
			if hits, _ := gateChapter(context.Background(), root, "serverlab", "chapters/01", rubric.Chapter{ID: "01"}, map[string]bool{tt.rule: true}, nil, nil); len(hits) != 0 {
				t.Errorf("-allow %s still reports %v", tt.rule, hits)
			}
		})
	}
}

// A refusal costs the chapter, or the exercises a forbid names.
func TestGateCost(t *testing.T) {
	ch := &ChapterResult{Exercises: []ExerciseResult{{ID: "1.1"}, {ID: "1.2"}}}
	screenCost([]Hit{{Rule: ruleForbid, What: "x", File: "f.go", Line: 1, Exercises: []string{"1.2"}, gate: true}}, ch)
	if ch.Exercises[0].Cause != "" || ch.Exercises[1].Cause != CauseIntegrity {
		t.Errorf("a forbid of 1.2 cost %q, %q", ch.Exercises[0].Cause, ch.Exercises[1].Cause)
	}
	screenCost([]Hit{{Rule: ruleImport, What: "x", File: "f.go", Line: 1, gate: true}}, ch)
	if ch.Exercises[0].Cause != CauseIntegrity || !strings.HasPrefix(ch.Exercises[0].Message, "f.go:1: x (") {
		t.Errorf("a refusal left 1.1 at %q: %q", ch.Exercises[0].Cause, ch.Exercises[0].Message)
	}
}

// allowTable renders the allow-list as docs/grading.md shows it: one row
// per chapter, its entries grouped by package.
func allowTable() string {
	var b strings.Builder
	b.WriteString("| chapter | beyond the ordinary standard library |\n|---|---|\n")
	rows := map[string][]string{"every": everyChapter}
	maps.Copy(rows, chapterAllow)
	for _, id := range slices.Sorted(maps.Keys(rows)) {
		var cells []string
		byPkg := map[string][]string{}
		var pkgs []string
		for _, e := range rows[id] {
			pkg, member := splitEntry(e)
			if _, ok := byPkg[pkg]; !ok {
				pkgs = append(pkgs, pkg)
			}
			if member != "" {
				byPkg[pkg] = append(byPkg[pkg], member)
			} else {
				byPkg[pkg] = byPkg[pkg][:0:0]
			}
		}
		for _, pkg := range pkgs {
			if len(byPkg[pkg]) == 0 {
				cells = append(cells, "`"+pkg+"`")
				continue
			}
			cells = append(cells, "`"+pkg+"`: "+strings.Join(byPkg[pkg], ", "))
		}
		fmt.Fprintf(&b, "| %s | %s |\n", id, strings.Join(cells, "; "))
	}
	return b.String()
}

// splitEntry splits an allow-list entry into its import path and member:
// "golang.org/x/sys/unix.Close" → "golang.org/x/sys/unix", "Close". A
// member is exported, so "github.com/nats-io/nats.go" is a package.
func splitEntry(e string) (pkg, member string) {
	slash := strings.LastIndex(e, "/")
	dot := strings.Index(e[slash+1:], ".")
	if dot < 0 {
		return e, ""
	}
	pkg, member = e[:slash+1+dot], e[slash+1+dot+1:]
	if member == "" || !unicode.IsUpper(rune(member[0])) {
		return e, ""
	}
	return pkg, member
}

// docs/grading.md's table of the allow-list is this file's, so that it
// cannot drift.
func TestGateTableInDocs(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/grading.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := allowTable(); !strings.Contains(string(doc), want) {
		t.Errorf("docs/grading.md's allow-list table is not gate_allow.go's; it should read:\n%s", want)
	}
}
