package grade

import (
	"fmt"
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
// marker says so, guided otherwise (no marker, or one it cannot read). A
// marker the grader refuses to read (a link, a device, a huge file:
// readTreeFile) is the error it returns, for the report.
func trackOf(dir string) (string, error) {
	b, err := readTreeFile(filepath.Join(dir, TrackFile))
	if err != nil {
		if isRefused(err) {
			return TrackGuided, err
		}
		return TrackGuided, nil
	}
	if f := strings.Fields(string(b)); len(f) > 0 && f[0] == TrackOpen {
		return TrackOpen, nil
	}
	return TrackGuided, nil
}

// setTracks records every chapter's track in the report, and a note for a
// marker that was not read.
func (rep *Report) setTracks(root string) {
	for i := range rep.Chapters {
		dir := rep.Chapters[i].Dir
		track, err := trackOf(filepath.Join(root, filepath.FromSlash(dir)))
		rep.Chapters[i].Track = track
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("track marker: %s/%s %s; the chapter is graded as on the guided track",
				dir, TrackFile, err.(*errTreeFile).why))
		}
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
