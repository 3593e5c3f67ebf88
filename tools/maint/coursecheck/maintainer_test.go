package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"serverlab/tools/internal/grade"
)

func TestSelectExercises(t *testing.T) {
	chapters, err := grade.SelectChapters("../../cmd/grade/testdata/rubric.json", "")
	if err != nil {
		t.Fatal(err)
	}
	picked, err := grade.SelectExercises(chapters, " 2.2, 1.3,1.1")
	if err != nil {
		t.Fatalf("grade.SelectExercises: %v", err)
	}
	var got []string
	for _, ch := range picked {
		for _, ex := range ch.Exercises {
			got = append(got, ch.ID+":"+ex.ID)
		}
	}
	if s := strings.Join(got, " "); s != "01:1.1 01:1.3 02:2.2" {
		t.Errorf("-ex \" 2.2, 1.3,1.1\" picks %s, want 01:1.1 01:1.3 02:2.2 (course order, only their chapters)", s)
	}
	if _, err := grade.SelectExercises(chapters, "1.1,9.9"); err == nil || !strings.Contains(err.Error(), "no exercise 9.9") {
		t.Errorf("-ex 1.1,9.9: error %v, want one naming 9.9", err)
	}
	if all, _ := grade.SelectExercises(chapters, ""); len(all) != len(chapters) {
		t.Errorf("no -ex keeps %d chapters, want %d", len(all), len(chapters))
	}
}

// TestGradeWithExAndOverlay grades, as the checks do, the ladder fixture's starter with the
// solution's lib.go overlaid (and its shout.go added), and only two exercises of it: both pass.
func TestGradeWithExAndOverlay(t *testing.T) {
	t.Parallel()
	root := mustAbs(t, fixtureRoot)
	ov := filepath.Join(t.TempDir(), "overlay.json")
	raw, _ := json.Marshal(overlayFile{Replace: map[string]string{
		filepath.Join(root, ladderChapters, "01", "lib.go"):   filepath.Join(root, ladderSolutions, "01", "lib.go"),
		filepath.Join(root, ladderChapters, "01", "shout.go"): filepath.Join(root, ladderSolutions, "01", "shout.go"),
	}})
	if err := os.WriteFile(ov, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	chapters, err := grade.SelectChapters(ladderRubric, "")
	if err == nil {
		chapters, err = grade.SelectExercises(chapters, "1.2,1.4")
	}
	if err != nil {
		t.Fatal(err)
	}
	rep, err := grade.Grade(t.Context(), grade.Options{Root: fixtureRoot, Target: ladderChapters, Chapters: chapters,
		Timeout: 40 * time.Second, Jobs: 2, Overlay: ov})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	rep.Exercises(func(ch grade.ChapterResult, ex grade.ExerciseResult) { ids = append(ids, ex.ID+":"+ex.Status()) })
	if s := strings.Join(ids, " "); s != "1.2:passed 1.4:passed" {
		t.Errorf("graded %s, want 1.2:passed 1.4:passed", s)
	}
}

func TestWriteOverlayRefusesTwoReplacements(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeOverlay(dir, map[string]string{"/a.go": "/b.go"}, map[string]string{"/a.go": "/c.go"}); err == nil {
		t.Error("writeOverlay let two overlays replace /a.go")
	}
	p, err := writeOverlay(dir, map[string]string{"/a.go": "/b.go"}, map[string]string{"/d.go": ""})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readOverlay(p)
	if err != nil || len(got) != 2 || got["/a.go"] != "/b.go" || got["/d.go"] != "" {
		t.Errorf("readOverlay(writeOverlay(...)) = %v, %v; want both entries", got, err)
	}
}

func TestStressOfPassingFixture(t *testing.T) {
	t.Parallel()
	var stdout bytes.Buffer
	code, stderr := gradeLadder(t, &stdout, "-repeat", "2", "-rubric", "../../cmd/grade/testdata/rubric-pass.json", "-solutions", fixtureTarget)
	if code != grade.ExitOK || !strings.Contains(stdout.String(), "stress: 2/2 runs passed") {
		t.Errorf("exit status %d, stdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr)
	}
}
