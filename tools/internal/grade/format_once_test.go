package grade

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFormatTextSharedIntegrityOnce: a refusal the gate makes for a whole
// chapter costs every exercise, and the text table says it once, above
// them, not once per exercise (round 3: eighteen identical lines in chapter
// 05). The JSON report keeps every exercise's message.
func TestFormatTextSharedIntegrityOnce(t *testing.T) {
	refusal := "chapters/05/server.go:215: chapter 05's code needs no unix.Dup: the chapter uses only what its lesson uses of it (" + gateTeach + ")"
	ch := ChapterResult{ID: "05", Title: "An epoll event loop", Dir: "chapters/05", Package: "serverlab/chapters/05",
		Integrity: []string{refusal}}
	for _, id := range []string{"5.1", "5.2", "5.3"} {
		ch.Exercises = append(ch.Exercises, ExerciseResult{ID: id, Title: "Drain " + id, Test: "TestEx" + id, Pattern: "Ex" + id,
			Max: 8, Cause: CauseIntegrity, Message: refusal})
	}
	rep := &Report{Target: "chapters", Chapters: []ChapterResult{ch}}
	rep.total()
	text := string(render(t, "text", rep))
	if n := strings.Count(text, "needs no unix.Dup"); n != 1 {
		t.Errorf("the shared refusal is shown %d times, want once:\n%s", n, text)
	}
	for _, want := range []string{"screening found", "  5.3  Drain 5.3  0/8  integrity"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}

	var back Report
	if err := json.Unmarshal(render(t, "json", rep), &back); err != nil {
		t.Fatal(err)
	}
	for _, ex := range back.Chapters[0].Exercises {
		if ex.Message != refusal {
			t.Errorf("JSON: exercise %s's message is %q, want the refusal whole", ex.ID, ex.Message)
		}
	}

	// A message one exercise alone has stays under it.
	rep.Chapters[0].Integrity = nil
	rep.Chapters[0].Exercises = rep.Chapters[0].Exercises[:1]
	text = string(render(t, "text", rep))
	if strings.Contains(text, "screening found") || !strings.Contains(text, "       "+refusal[:40]) {
		t.Errorf("a lone exercise's integrity message should stay under its row:\n%s", text)
	}
}
