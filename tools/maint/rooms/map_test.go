package rooms

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// mapPage is the course's one map; its first mermaid graph draws the rooms
// and the arrows between them.
const mapPage = "../../../docs/architecture.md"

// mapNode names each room as the page's graph does.
var mapNode = map[string]Room{
	"given": Given, "tests": Tests, "chapters": Chapters, "solutions": Solutions,
	"internal": Internal, "cmd": Cmd, "maint": Maint,
}

var arrow = regexp.MustCompile(`^\s*(\w+)\s*-->\s*(\w+)\s*$`)

// drawnArrows reads the rooms graph of the map page: every "a --> b" line of
// its first ```mermaid block.
func drawnArrows(t *testing.T) map[Room][]Room {
	t.Helper()
	b, err := os.ReadFile(mapPage)
	if err != nil {
		t.Fatalf("the map page: %v", err)
	}
	_, block, ok := strings.Cut(string(b), "```mermaid\n")
	if !ok {
		t.Fatalf("%s has no mermaid block: the rooms graph is its first", mapPage)
	}
	block, _, _ = strings.Cut(block, "```")
	drawn := map[Room][]Room{}
	for _, line := range strings.Split(block, "\n") {
		m := arrow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		from, okf := mapNode[m[1]]
		to, okt := mapNode[m[2]]
		if !okf || !okt {
			t.Errorf("%s draws %s --> %s: a node that is no room (rooms: given, tests, chapters, solutions, internal, cmd, maint)", mapPage, m[1], m[2])
			continue
		}
		drawn[from] = append(drawn[from], to)
	}
	return drawn
}

// TestMapMatchesRules holds docs/architecture.md's picture to the rules the
// imports are checked against: the same arrows, no more, no fewer.
func TestMapMatchesRules(t *testing.T) {
	drawn := drawnArrows(t)
	for room := range mapNode {
		r := mapNode[room]
		got := slices.Clone(drawn[r])
		want := slices.Clone(mayImport[r])
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("room %s: the map (%s) draws arrows to %v, the rules (rooms.go mayImport) allow %v: change one so that they agree", r, mapPage, got, want)
		}
	}
}
