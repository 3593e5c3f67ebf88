package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"serverlab/tools/internal/rubric"
)

// hint shows the hints of an exercise up to one more than last time: first
// the idea, then the pitfall, then the API to use, last the recipe. How many were shown is
// kept in the cache directory, so that asking again moves on. Without an
// exercise, it is the one next names: the first that does not pass.
func (c *course) hint(ctx context.Context, w io.Writer, arg string) error {
	ch, ex, err := c.hintTarget(ctx, arg)
	if err != nil {
		return err
	}
	if len(ex.Hints) == 0 {
		return fmt.Errorf("exercise %s has no hints in the rubric; its lesson is chapters/%s/README.md", ex.ID, ch.ID)
	}
	shown, err := loadHintCounts()
	if err != nil {
		return err
	}
	n := min(shown[ex.ID]+1, len(ex.Hints))
	fmt.Fprintf(w, "Exercise %s — %s (chapter %s)\n", ex.ID, ex.Title, ch.ID)
	for i, h := range ex.Hints[:n] {
		fmt.Fprintf(w, "\nhint %d of %d, %s:\n", i+1, len(ex.Hints), hintKind(i))
		for _, line := range strings.Split(h, "\n") { // a recipe has a line per function
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	if n < len(ex.Hints) {
		fmt.Fprintf(w, "\nStill stuck? make hint EX=%s again shows %s.\n", ex.ID, hintKind(n))
	} else {
		fmt.Fprintf(w, "\nThat was the last hint. make next shows the lesson's paragraph and the TODOs; %s checks it.\n", testCommand(ch, ex))
	}
	shown[ex.ID] = n
	return saveHintCounts(shown)
}

// hintTarget is the exercise arg names, or, when it is empty, the next
// unsolved one (as make next finds it, from the cached results).
func (c *course) hintTarget(ctx context.Context, arg string) (rubric.Chapter, rubric.Exercise, error) {
	if strings.TrimSpace(arg) != "" {
		return c.findExercise(arg)
	}
	all, err := c.results(ctx)
	if err != nil {
		return rubric.Chapter{}, rubric.Exercise{}, err
	}
	ch, ex, ok := c.nextExercise(all)
	if !ok {
		return rubric.Chapter{}, rubric.Exercise{}, usagef("every exercise passes here, so there is no next one to hint at: make hint EX=3.4 names one")
	}
	return ch, ex, nil
}

func hintKind(i int) string {
	if i < len(rubric.HintKinds) {
		return rubric.HintKinds[i]
	}
	return "one more"
}

func hintsPath() (string, error) {
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "hints.json"), nil
}

// loadHintCounts returns how many hints of each exercise were shown.
func loadHintCounts() (map[string]int, error) {
	shown := map[string]int{}
	p, err := hintsPath()
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return shown, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &shown); err != nil {
		return map[string]int{}, nil // a damaged file starts the hints again
	}
	return shown, nil
}

func saveHintCounts(shown map[string]int) error {
	p, err := hintsPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(shown, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}
