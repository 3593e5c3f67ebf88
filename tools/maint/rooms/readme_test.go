package rooms

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolsREADMENamesEveryPackage holds tools/README.md, the page that says
// what each package of tools/ is for, to the tree: every package of a room
// (given's at any depth, the others' top-level ones) is named there in
// backquotes. A package added without a line is the next maintainer's
// mystery.
func TestToolsREADMENamesEveryPackage(t *testing.T) {
	const tools = "../.."
	readme, err := os.ReadFile(filepath.Join(tools, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, room := range []string{"given", "internal", "cmd", "maint"} {
		base := filepath.Join(tools, room)
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() || p == base {
				return err
			}
			rel, _ := filepath.Rel(base, p)
			rel = filepath.ToSlash(rel)
			if d.Name() == "testdata" || (room != "given" && strings.Contains(rel, "/")) {
				return fs.SkipDir
			}
			if goFiles, _ := filepath.Glob(filepath.Join(p, "*.go")); len(goFiles) == 0 {
				return nil // a folder of packages, not one
			}
			if !strings.Contains(string(readme), "`"+rel+"`") {
				t.Errorf("tools/README.md does not name tools/%s/%s: add what it is for to the %s/ row", room, rel, room)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
