package rooms

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolsREADMEPointsToTheMap holds tools/README.md to pointing at the
// map instead of restating it: it links docs/architecture.md and names no
// package of tools/ in backquotes. The map's rows name every package
// (TestMapRowsNameTheirRooms); a second list beside them went stale
// (issue 37: it missed nested packages and no test saw it).
func TestToolsREADMEPointsToTheMap(t *testing.T) {
	const tools = "../.."
	readme, err := os.ReadFile(filepath.Join(tools, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(../docs/architecture.md") {
		t.Errorf("tools/README.md does not link the map, ../docs/architecture.md")
	}
	for _, room := range []string{"given", "internal", "cmd", "maint"} {
		base := filepath.Join(tools, room)
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || p == base {
				return err
			}
			if d.Name() == "testdata" {
				return fs.SkipDir
			}
			rel, _ := filepath.Rel(base, p)
			rel = filepath.ToSlash(rel)
			if goFiles, _ := filepath.Glob(filepath.Join(p, "*.go")); len(goFiles) > 0 && strings.Contains(string(readme), "`"+rel+"`") {
				t.Errorf("tools/README.md names tools/%s/%s: the map's %s row says what it is for; link it instead of restating", room, rel, room)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// roomFolder is where each room lives, as the map's table names it: by its
// folder in backquotes, the maintainers' room too (the page ships to
// students, who read there which folder their release leaves out).
var roomFolder = map[Room]string{
	Chapters: "`chapters/NN/`", Solutions: "`solutions/`", Tests: "`tests/`", Given: "`tools/given/`",
	Internal: "`tools/internal/`", Cmd: "`tools/cmd/`", Maint: "`tools/maint/`",
}

// TestMapTableNamesEveryRoom holds the map's table of rooms to the layout:
// every room the rules know has a row whose first cell is its folder, and
// every folder a row names exists.
func TestMapTableNamesEveryRoom(t *testing.T) {
	page, err := os.ReadFile(mapPage)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, line := range strings.Split(string(page), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 || cells[0] != "" {
			continue
		}
		first := strings.TrimSpace(cells[1])
		rows[first] = true
		folder, ok := strings.CutPrefix(first, "`")
		if !ok {
			continue
		}
		folder = strings.TrimSuffix(folder, "`")
		dir := strings.ReplaceAll(folder, "NN", "01")
		if info, err := os.Stat(filepath.Join("../../..", dir)); err != nil || !info.IsDir() {
			t.Errorf("%s has a row for %s, which is not a folder of the course", mapPage, folder)
		}
	}
	for room, folder := range roomFolder {
		if !rows[folder] {
			t.Errorf("%s has no row whose first cell is %s (the %s room)", mapPage, folder, room)
		}
	}
	for room := range mayImport {
		if _, ok := roomFolder[room]; !ok {
			t.Errorf("room %s has no folder in this test's roomFolder: add it, and its row to %s", room, mapPage)
		}
	}
}

// TestTestsREADMENamesEverySuite holds tests/README.md to the folders of
// tests/: each is named in backquotes, so that a new suite says what it is.
func TestTestsREADMENamesEverySuite(t *testing.T) {
	const tests = "../../../tests"
	readme, err := os.ReadFile(filepath.Join(tests, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(tests)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.Contains(string(readme), "`"+e.Name()+"/`") {
			t.Errorf("tests/README.md does not name %s/: add a row that says what it is and who uses it", e.Name())
		}
	}
}
