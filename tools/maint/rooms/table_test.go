package rooms

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The map's table says, room by room, what lives there; the tests of this
// file hold each row to the tree, so that what a maintainer reads there is
// the whole room and nothing that has gone.

// root is the module's root, seen from this package.
const root = "../../.."

// roomDir is each room's folder, relative to the module.
var roomDir = map[Room]string{
	Chapters: "chapters", Solutions: "solutions", Tests: "tests", Given: "tools/given",
	Internal: "tools/internal", Cmd: "tools/cmd", Maint: "tools/maint",
}

// mapRows returns the map's table rows, by their first cell.
func mapRows(t *testing.T) map[string]string {
	t.Helper()
	page, err := os.ReadFile(mapPage)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(page), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || cells[0] != "" {
			continue
		}
		rows[strings.TrimSpace(cells[1])] = line
	}
	return rows
}

// isChapter says whether a folder's name is a chapter's (two digits).
func isChapter(name string) bool {
	return len(name) == 2 && name[0] >= '0' && name[0] <= '9' && name[1] >= '0' && name[1] <= '9'
}

// generic writes a path of one chapter as the map names it for all:
// "chapters/04/todo.go" is "chapters/NN/todo.go".
func generic(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) > 1 && (parts[0] == "chapters" || parts[0] == "solutions") && isChapter(parts[1]) {
		parts[1] = "NN"
	}
	return strings.Join(parts, "/")
}

// tenants lists what a room's row must name, as paths relative to the
// module (a folder ends in "/", a chapter's number is NN):
//   - tools/given: every package, at any depth;
//   - the other rooms of tools/, and tests/: every folder (a package, a
//     command, a suite, a catalogue);
//   - chapters/ and solutions/: every folder of a chapter that holds files
//     (a command's folder counts as cmd/), every file only one of the two
//     trees has (the lesson, todo.go, the files the mirror leaves out), and
//     the files of the room's own top folder.
func tenants(t *testing.T, r Room) []string {
	t.Helper()
	dir := roomDir[r]
	var out []string
	add := func(p string) {
		if p = generic(p); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	entries, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		t.Fatal(err)
	}
	switch r {
	case Given:
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			if d.Name() == "testdata" {
				return fs.SkipDir
			}
			if goFiles, _ := filepath.Glob(filepath.Join(p, "*.go")); len(goFiles) > 0 {
				rel, _ := filepath.Rel(root, p)
				add(filepath.ToSlash(rel) + "/")
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	case Chapters, Solutions:
		other := roomDir[Solutions]
		if r == Solutions {
			other = roomDir[Chapters]
		}
		for _, e := range entries {
			if !e.IsDir() {
				add(dir + "/" + e.Name())
				continue
			}
			if !isChapter(e.Name()) {
				add(dir + "/" + e.Name() + "/")
				continue
			}
			ch := dir + "/" + e.Name()
			err := filepath.WalkDir(filepath.Join(root, ch), func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(filepath.Join(root, ch), p)
				rel = filepath.ToSlash(rel)
				if d.IsDir() {
					switch {
					case rel == "cmd":
						add(ch + "/cmd/")
						return fs.SkipDir
					case rel != ".":
						if files, _ := os.ReadDir(p); slices.ContainsFunc(files, func(f fs.DirEntry) bool { return !f.IsDir() }) {
							add(ch + "/" + rel + "/")
							return fs.SkipDir
						}
					}
					return nil
				}
				if _, err := os.Stat(filepath.Join(root, other, e.Name(), rel)); os.IsNotExist(err) {
					add(ch + "/" + rel)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	default:
		for _, e := range entries {
			if e.IsDir() {
				add(dir + "/" + e.Name() + "/")
			}
		}
		for _, p := range nestedPackages(t, dir) {
			add(p)
		}
	}
	return out
}

// named says whether a row names path p: in backquotes, as the whole path,
// or relative to the room's folder (a chapter's file relative to its
// chapter, chapters/NN/), a folder with or without its final slash.
func named(row, p string, r Room) bool {
	base := roomDir[r] + "/"
	if r == Chapters || r == Solutions {
		// A chapter's file by its name in the chapter; the room's own
		// files (chapters/README.md) by their whole path, so that the
		// lesson's README.md does not stand for the index's.
		rest, ok := strings.CutPrefix(p, base+"NN/")
		return mentions(row, p) || ok && mentions(row, rest)
	}
	if mentions(row, p) {
		return true
	}
	rest, ok := strings.CutPrefix(p, base)
	return ok && mentions(row, rest)
}

func mentions(row, name string) bool {
	return strings.Contains(row, "`"+name+"`") ||
		strings.HasSuffix(name, "/") && strings.Contains(row, "`"+strings.TrimSuffix(name, "/")+"`")
}

// TestMapRowsNameTheirRooms holds each row of the map's table to its room:
// everything tenants lists is named in the row, so that a package, a suite
// or a starter's file is never on no map.
func TestMapRowsNameTheirRooms(t *testing.T) {
	rows := mapRows(t)
	for r := range mayImport {
		row, ok := rows[roomFolder[r]]
		if !ok {
			continue // TestMapTableNamesEveryRoom says so
		}
		for _, p := range tenants(t, r) {
			if !named(row, p, r) && !underSubtree(row, p, r) {
				t.Errorf("%s: the %s row (%s) does not name %s: add it, in backquotes, with what it is for", mapPage, r, roomFolder[r], p)
			}
		}
	}
}

// pathLike is a backquoted name that reads as a file or folder of the
// course, not a command line or an identifier with arguments.
var pathLike = regexp.MustCompile("`([A-Za-z0-9_][A-Za-z0-9_./-]*)`")

// TestMapRowsNameOnlyWhatExists holds each row of the map's table to the
// tree the other way: a path a row names in backquotes (whole, or relative
// to the row's room, NN standing for any chapter) exists, so that a row
// does not outlive a package that moved or went.
func TestMapRowsNameOnlyWhatExists(t *testing.T) {
	rows := mapRows(t)
	chapters, err := os.ReadDir(filepath.Join(root, "chapters"))
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool {
		for _, e := range chapters {
			if isChapter(e.Name()) {
				if _, err := os.Stat(filepath.Join(root, strings.ReplaceAll(p, "NN", e.Name()))); err == nil {
					return true
				}
			}
		}
		return false
	}
	for r := range mayImport {
		row, ok := rows[roomFolder[r]]
		if !ok {
			continue
		}
		bases := []string{"", roomDir[r] + "/"}
		if r == Chapters || r == Solutions {
			bases = append(bases, roomDir[r]+"/NN/")
		}
		for _, m := range pathLike.FindAllStringSubmatch(row, -1) {
			if !slices.ContainsFunc(bases, func(b string) bool { return exists(b + m[1]) }) {
				t.Errorf("%s: the %s row names `%s`, which is in no folder it could mean (%s): the tree changed, or the name did", mapPage, r, m[1], strings.Join(bases[1:], ", "))
			}
		}
	}
}

// solutionsSentence opens the map's sentence that lists the packages whose
// tests import solutions/.
const solutionsSentence = "The only arrow into `solutions/`"

// TestMapNamesWhoImportsSolutions holds the map's sentence about the one
// arrow into solutions/ to the import graph: the packages it names are
// exactly those whose solution-backed tests (-tags solutions) import a
// solution. A test that only runs a solution's program by path imports
// nothing, and is no arrow.
func TestMapNamesWhoImportsSolutions(t *testing.T) {
	page, err := os.ReadFile(mapPage)
	if err != nil {
		t.Fatal(err)
	}
	_, sentence, ok := strings.Cut(string(page), solutionsSentence)
	if !ok {
		t.Fatalf("%s has no sentence opening %q: it names the packages whose tests import solutions/", mapPage, solutionsSentence)
	}
	if i := strings.Index(sentence, ".\n"); i >= 0 {
		sentence = sentence[:i]
	}
	if i := strings.Index(sentence, ". "); i >= 0 {
		sentence = sentence[:i]
	}
	var said []string
	for _, m := range pathLike.FindAllStringSubmatch(sentence, -1) {
		if Of(m[1]) != Other && Of(m[1]) != Solutions {
			said = append(said, m[1])
		}
	}
	plain := imports(t, "")
	var real []string
	for from, tos := range imports(t, "solutions") {
		for to := range tos {
			if Of(to) == Solutions && Of(from) != Solutions && !plain[from][to] && !slices.Contains(real, from) {
				real = append(real, from)
			}
		}
	}
	slices.Sort(said)
	slices.Sort(real)
	if !slices.Equal(said, real) {
		t.Errorf("%s: the sentence %q… names %v as importing solutions/ in their -tags solutions tests; the import graph says %v: say what is true", mapPage, solutionsSentence, said, real)
	}
}
