package rooms

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// node is one box of the map's rooms graph: `id["folder — what it is"]`.
var node = regexp.MustCompile(`^\s*(\w+)\["([^"]*)"\]\s*$`)

// TestMapPictureIsTheRooms holds the boxes of the map's rooms graph to the
// rules: every box is a room of rooms.go, every room has a box, and each
// box's label opens with its room's folder (chapters and solutions with
// /NN), so that the picture cannot rename or move a room the rules know by
// another folder. The arrows between them are TestMapMatchesRules's.
func TestMapPictureIsTheRooms(t *testing.T) {
	b, err := os.ReadFile(mapPage)
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "```mermaid\n")
	if !ok {
		t.Fatalf("%s has no mermaid block: the rooms graph is its first", mapPage)
	}
	block, _, _ = strings.Cut(block, "```")
	drawn := map[Room]bool{}
	for _, line := range strings.Split(block, "\n") {
		m := node.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		r, ok := mapNode[m[1]]
		if !ok {
			t.Errorf("%s draws a box %s: no room of the rules (rooms.go) has that name", mapPage, m[1])
			continue
		}
		if _, ok := mayImport[r]; !ok {
			t.Errorf("%s draws room %s, which the rules (rooms.go mayImport) do not have", mapPage, r)
		}
		drawn[r] = true
		folder, _, _ := strings.Cut(m[2], " — ")
		want := roomDir[r]
		if r == Chapters || r == Solutions {
			want += "/NN"
		}
		if folder != want {
			t.Errorf("%s labels room %s %q: its folder is %s, and the label opens with it (then \" — \" and what it holds)", mapPage, r, m[2], want)
		}
	}
	for r := range mayImport {
		if !drawn[r] {
			t.Errorf("%s draws no box for room %s (`%s[\"%s — …\"]`): every room of the rules is in the picture", mapPage, r, r, roomDir[r])
		}
	}
}
