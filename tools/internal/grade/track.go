package grade

import (
	"os"
	"path/filepath"
	"strings"
)

// Tracks: a chapter is done on the guided track (the starter's stubs, each
// with its contract) or on the open track (`make reset CH=NN MODE=open`: the
// types and interfaces the suite's wiring needs and an empty server, the
// design the student's own). The same suites grade both; the report says
// which one a chapter was done in, from the marker file the open reset
// writes in the chapter's folder.
const (
	TrackGuided = "guided"
	TrackOpen   = "open"

	// TrackFile is the marker: its first word is the track. The student
	// tool writes it (tools/cmd/student, reset MODE=open) and removes it
	// (MODE=guided).
	TrackFile = "TRACK"
)

// trackOf reads the track of the chapter folder dir (absolute): open if its
// marker says so, guided otherwise (no marker, or one it cannot read).
func trackOf(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, TrackFile))
	if err != nil {
		return TrackGuided
	}
	if f := strings.Fields(string(b)); len(f) > 0 && f[0] == TrackOpen {
		return TrackOpen
	}
	return TrackGuided
}

// setTracks records every chapter's track in the report.
func (rep *Report) setTracks(root string) {
	for i := range rep.Chapters {
		rep.Chapters[i].Track = trackOf(filepath.Join(root, filepath.FromSlash(rep.Chapters[i].Dir)))
	}
}

// trackNote is what the text report adds after a chapter's folder: nothing
// on the guided track, which is the default, and the open track by name.
func trackNote(track string) string {
	if track == TrackOpen {
		return ", open track"
	}
	return ""
}
