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
// kept in the cache directory, per checkout, so that asking again moves on. Without an
// exercise, it is the one next names: the first that does not pass.
//
// On the open track the recipe is left out: it builds the guided starter's
// types and functions (3.4's newClientConn, clientConn, c.waitRoom …),
// which the open starter does not have and the student's design need not.
func (c *course) hint(ctx context.Context, w io.Writer, arg string) error {
	ch, ex, err := c.hintTarget(ctx, arg)
	if err != nil {
		return err
	}
	if len(ex.Hints) == 0 {
		return fmt.Errorf("exercise %s has no hints in the rubric; its lesson is chapters/%s/README.md", ex.ID, ch.ID)
	}
	open := c.currentTrack(ch.ID) == trackOpen
	shown, err := c.loadHintCounts()
	if err != nil {
		return err
	}
	n := min(shown[ex.ID]+1, len(ex.Hints))
	fmt.Fprintf(w, "Exercise %s — %s (chapter %s)\n", ex.ID, ex.Title, ch.ID)
	for i, h := range ex.Hints[:n] {
		fmt.Fprintf(w, "\nhint %d of %d, %s:\n", i+1, len(ex.Hints), hintKind(i))
		if open && isRecipe(i) {
			fmt.Fprintf(w, "  Chapter %s is on the open track, and the recipe is the guided track's: it builds the\n"+
				"  guided starter's types and functions, which your design need not have. What to weigh instead:\n"+
				"  chapters/%s/README.md, \"Design it yourself\". (make reset CH=%s MODE=guided goes back to the\n"+
				"  guided starter, your files backed up first.)\n", ch.ID, ch.ID, ch.ID)
			continue
		}
		for _, line := range strings.Split(h, "\n") { // a recipe has a line per function
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	if n < len(ex.Hints) {
		fmt.Fprintf(w, "\nStill stuck? make hint EX=%s again shows %s.\n", ex.ID, hintKind(n))
	} else {
		fmt.Fprintf(w, "\nThat was the last hint. make next shows the lesson's paragraph and the TODOs; %s checks it.\n", c.testCommand(ch, ex))
	}
	shown[ex.ID] = n
	return c.saveHintCounts(shown)
}

// isRecipe reports whether hint i is the recipe, the last kind.
func isRecipe(i int) bool { return i == len(rubric.HintKinds)-1 }

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

// hintsPath is the file that counts the hints shown in this checkout: keyed
// by the checkout as its results are (resultsPath), so that a second copy of
// the course, or a fresh one, starts again at the idea.
func (c *course) hintsPath() (string, error) {
	dir, err := cacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "hints", c.checkoutKey()+".json"), nil
}

// loadHintCounts returns how many hints of each exercise were shown.
func (c *course) loadHintCounts() (map[string]int, error) {
	shown := map[string]int{}
	p, err := c.hintsPath()
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

func (c *course) saveHintCounts(shown map[string]int) error {
	p, err := c.hintsPath()
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
	return writeFile(p, b)
}
