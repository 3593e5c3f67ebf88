package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"serverlab/tools/internal/grade"
)

// leakMarker begins every line a forgery prints of a file it should not
// have been able to read (tools/maint/forgeries/01/read-beyond-the-sandbox.patch
// reads /opt, /srv, /var/lib and the machine's other folders from the
// subject and panics with what it found). A forgery that earned nothing but
// put the grader's machine into its report still won: the report goes back
// to the student. So the whole report, every format's source, must not hold
// the marker.
const leakMarker = "serverlab-forgery-leaked:"

// leaked names, for gradeForgery, the lines of rep that carry the marker.
func leaked(rep *grade.Report) []string {
	b, err := json.Marshal(rep)
	if err != nil || !strings.Contains(string(b), leakMarker) {
		return nil
	}
	var out []string
	rep.Exercises(func(_ grade.ChapterResult, ex grade.ExerciseResult) {
		for _, line := range strings.Split(ex.Message, "\n") {
			if _, after, ok := strings.Cut(line, leakMarker); ok && len(out) < 5 {
				out = append(out, fmt.Sprintf("%s leaked a file into the report: %s", ex.ID, strings.TrimSpace(after)))
			}
		}
	})
	if len(out) == 0 {
		out = append(out, "the report holds "+leakMarker+" (outside an exercise's message)")
	}
	return out
}
