package grade

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTrackOfChapter(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct{ ch, marker, want string }{
		{"01", "", TrackGuided}, // no marker: the starter's track
		{"03", "open\n(written by make reset CH=03 MODE=open)\n", TrackOpen},
		{"04", "guided\n", TrackGuided},
		{"05", "opened?\n", TrackGuided}, // only the word open is the open track
	} {
		dir := filepath.Join(root, "chapters", tc.ch)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if tc.marker != "" {
			if err := os.WriteFile(filepath.Join(dir, TrackFile), []byte(tc.marker), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		rep := &Report{Chapters: []ChapterResult{{ID: tc.ch, Dir: "chapters/" + tc.ch}}}
		rep.setTracks(root)
		if got := rep.Chapters[0].Track; got != tc.want {
			t.Errorf("chapter %s with marker %q: track %q, want %q", tc.ch, tc.marker, got, tc.want)
		}
		var b strings.Builder
		writeTextChapter(&b, rep.Chapters[0])
		if open := strings.Contains(b.String(), ", open track)"); open != (tc.want == TrackOpen) {
			t.Errorf("chapter %s on the %s track: text report heading %q", tc.ch, tc.want, strings.SplitN(b.String(), "\n", 2)[0])
		}
	}
}
