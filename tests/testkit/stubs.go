package testkit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// A check of one exercise runs code the chapter's earlier exercises write:
// 4.4's trades go through 4.3's RWLock, 4.7's Close through 4.2's batches.
// When that code is still the starter's stub, the check fails for a reason
// its own message cannot see ("show must take the tree's read lock", when
// RWLock.RLock is empty), and the student fixes the wrong exercise. So the
// first failure of a check says first which earlier exercises of its chapter
// are still exactly their stubs (the functions that carry their TODO(ex N.K)
// markers, as the starter has them: starterStubs, derived from chapters/ by
// TestStarterStubsAreCurrent). It is a property of every check of every
// chapter, not a line per message. It reads the source in the working
// directory, which is the chapter's folder under go test and under the
// grader's judge alike; only messages depend on it, never a verdict.

// StubNotesEnv set to "off" silences the note: tools/internal/grade sets it
// when it builds with an overlay (the maintainers' ladder and mutants), whose
// files are not the ones on disk.
const StubNotesEnv = "SERVERLAB_STUB_NOTES"

// todoMarker finds the exercise ids of the TODO markers in a comment.
var todoMarker = regexp.MustCompile(`TODO\(ex (\d+\.\d+)\)`)

// StubPrints returns, for the non-test Go files of dir, a print of every
// function whose body carries a TODO(ex N.K) marker: keyed "N.K file
// Recv.Name" (one key per exercise the function's markers name), the value a
// short hash of its statements as gofmt prints them, comments left out.
func StubPrints(dir string) (map[string]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	prints := map[string]string{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, ok := readSource(name)
		if !ok {
			continue
		}
		if !bytes.Contains(src, []byte("TODO(ex ")) {
			continue
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			continue // a file that does not parse is being written: not a stub
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			var ids []string
			for _, cg := range f.Comments {
				if cg.Pos() > fd.Body.Lbrace && cg.End() < fd.Body.Rbrace {
					for _, m := range todoMarker.FindAllStringSubmatch(cg.Text(), -1) {
						if !slices.Contains(ids, m[1]) {
							ids = append(ids, m[1])
						}
					}
				}
			}
			if len(ids) == 0 {
				continue
			}
			h := sha256.New()
			for _, s := range fd.Body.List {
				printer.Fprint(h, fset, s) // an *ast.Stmt prints without the file's comments
				h.Write([]byte{'\n'})
			}
			sum := hex.EncodeToString(h.Sum(nil)[:8])
			for _, id := range ids {
				prints[id+" "+filepath.Base(name)+" "+funcName(fd)] = sum
			}
		}
	}
	return prints, nil
}

// maxSource bounds a source file readSource reads: a chapter's files are a
// few KiB.
const maxSource = 1 << 20

// readSource reads a Go file of the chapter's folder, if it is a regular
// file (not a link, which could lead the judge to a FIFO or /dev/zero) of at
// most maxSource bytes. Under the grader the subject cannot write that
// folder; what is read only selects which recorded stubs a note names.
func readSource(name string) ([]byte, bool) {
	fi, err := os.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxSource {
		return nil, false
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxSource))
	return src, err == nil
}

// funcName is "Recv.Name" for a method, "Name" for a function.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
			continue
		case *ast.IndexExpr:
			t = x.X
			continue
		case *ast.IndexListExpr:
			t = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fd.Name.Name
		}
		return fd.Name.Name
	}
}

// StubOwners returns, for chapter ch (its two-digit id), each function the
// starter stubs ("Server.Serve", "NewPool") with the exercises whose
// TODO(ex N.K) markers it holds, in order. It is read from starterStubs, the
// file derived from chapters/, so that the grader's rules that charge a
// finding to an exercise (tools/internal/grade's practice rule) and this
// package's notes share one list, which no one keeps by hand.
func StubOwners(ch string) map[string][]string {
	owners := map[string][]string{}
	for key := range starterStubs[ch] {
		id, rest, _ := strings.Cut(key, " ")
		_, fn, _ := strings.Cut(rest, " ")
		if !slices.Contains(owners[fn], id) {
			owners[fn] = append(owners[fn], id)
		}
	}
	for _, ids := range owners {
		slices.SortFunc(ids, compareExercise)
	}
	return owners
}

// compareExercise orders exercise ids numerically: 5.9 before 5.10.
func compareExercise(a, b string) int {
	am, an, _ := strings.Cut(a, ".")
	bm, bn, _ := strings.Cut(b, ".")
	ai, _ := strconv.Atoi(am)
	bi, _ := strconv.Atoi(bm)
	if ai != bi {
		return ai - bi
	}
	ak, _ := strconv.Atoi(an)
	bk, _ := strconv.Atoi(bn)
	return ak - bk
}

// untouchedStubs returns the exercises of chapter ch (its two-digit id)
// whose every stub function in dir is still the starter's, each with the
// functions that say so.
func untouchedStubs(ch, dir string) map[string][]string {
	starter := starterStubs[ch]
	if len(starter) == 0 {
		return nil
	}
	now, err := StubPrints(dir)
	if err != nil {
		return nil
	}
	funcs := map[string][]string{}
	touched := map[string]bool{}
	for key, sum := range starter {
		id, rest, _ := strings.Cut(key, " ")
		file, fn, _ := strings.Cut(rest, " ")
		if now[key] != sum {
			touched[id] = true
			continue
		}
		funcs[id] = append(funcs[id], file+": "+fn)
	}
	for id := range touched {
		delete(funcs, id)
	}
	for id, fs := range funcs {
		funcs[id] = byFile(fs)
	}
	return funcs
}

// byFile turns "file: Func" entries into one "file: F1, F2" per file.
func byFile(entries []string) []string {
	slices.Sort(entries)
	var out []string
	last := ""
	for _, e := range entries {
		file, fn, _ := strings.Cut(e, ": ")
		if file == last {
			out[len(out)-1] += ", " + fn
			continue
		}
		last = file
		out = append(out, e)
	}
	return out
}

// stubNotes remembers, per chapter folder, what untouchedStubs found: the
// source does not change while a test binary runs.
var stubNotes sync.Map // dir → map[string][]string

// earlierStubsNote is what a failing check of exercise says first: the
// earlier exercises of its chapter whose stubs are untouched, or "" when
// there are none, or when the check's own exercise is untouched too (its
// own stub is then the cause, and a note would be noise on every check of a
// fresh chapter).
func earlierStubsNote(exercise string) string {
	chNum, k, ok := strings.Cut(exercise, ".")
	if !ok {
		return ""
	}
	if os.Getenv(StubNotesEnv) == "off" {
		return ""
	}
	ch := chNum
	if len(ch) == 1 {
		ch = "0" + ch
	}
	dir, err := os.Getwd()
	if err != nil || filepath.Base(dir) != ch {
		return ""
	}
	v, ok := stubNotes.Load(dir)
	if !ok {
		v, _ = stubNotes.LoadOrStore(dir, untouchedStubs(ch, dir))
	}
	stubs := v.(map[string][]string)
	if _, own := stubs[exercise]; own {
		return ""
	}
	kNum, _ := strconv.Atoi(k)
	var earlier []string
	for id := range stubs {
		_, n, _ := strings.Cut(id, ".")
		if m, _ := strconv.Atoi(n); m < kNum {
			earlier = append(earlier, id)
		}
	}
	if len(earlier) == 0 {
		return ""
	}
	slices.SortFunc(earlier, func(a, b string) int {
		_, x, _ := strings.Cut(a, ".")
		_, y, _ := strings.Cut(b, ".")
		ax, _ := strconv.Atoi(x)
		by, _ := strconv.Atoi(y)
		return ax - by
	})
	var b strings.Builder
	for _, id := range earlier {
		fmt.Fprintf(&b, "first: %s is still the starter's stub (%s): this check runs the chapter's code, which "+
			"may call it, so the failure below may be %s's; solve %s first (go test -run Ex%s_)\n",
			id, strings.Join(stubs[id], "; "), id, id, strings.ReplaceAll(id, ".", "_"))
	}
	return b.String()
}

// noteOnce returns earlierStubsNote for the first failure of check k only:
// the note is said once, before the first message.
func (k *T) noteOnce() string {
	if _, said := notedChecks.LoadOrStore(k.T, true); said {
		return ""
	}
	return earlierStubsNote(k.exercise)
}

var notedChecks sync.Map // *testing.T → true
