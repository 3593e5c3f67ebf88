package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"serverlab/tools/internal/grade"
	"serverlab/tools/internal/rubric"
)

// The forgery catalogue (-forgeries, run by make test): the judge's own
// tests. Each tools/maint/forgeries/NN/<name>.patch is a way a student's code could
// try to earn points it has not, written against the untouched starter
// chapters/NN; every exercise of the chapter must still score nothing. Each
// tools/maint/forgeries/honest/NN/<name>.patch is honest work the grader must not
// charge: against solutions/NN, every exercise must keep its points. Each
// tools/maint/forgeries/clean/NN/<name>.patch is a starter that only looks
// alarming (it prints a race report, say): every exercise must fail with the
// cause failed, not the cause its output imitates. Each
// tools/maint/forgeries/solved/NN/<name>.patch is a cheat inside working
// code: against solutions/NN (a chapter that would otherwise pass), every
// exercise must score nothing, each with the cause integrity or race (the
// gate or the race detector caught it, not a test that happened to fail).
// Patches are as in tools/maint/mutants: a "# why" line, then a unified diff.

// forgery is one entry of the catalogue.
type forgery struct {
	mutant      // the patch (exercise unused)
	honest bool // against the solutions: must score full
	clean  bool // against the starters: must score nothing, every exercise with cause failed
	solved bool // against the solutions: must score nothing, every exercise with cause integrity or race
}

func findForgeries(root, dir string) ([]forgery, error) {
	base := filepath.Join(root, filepath.FromSlash(dir))
	var found []forgery
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == base {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".patch") {
			return nil
		}
		rel, _ := filepath.Rel(base, p)
		parts := strings.Split(filepath.ToSlash(rel), "/")
		f := forgery{honest: parts[0] == "honest", clean: parts[0] == "clean", solved: parts[0] == "solved"}
		if f.honest || f.clean || f.solved {
			parts = parts[1:]
		}
		f.file = path.Join(dir, filepath.ToSlash(rel))
		f.name = strings.TrimSuffix(parts[len(parts)-1], ".patch")
		if len(parts) != 2 {
			f.err = fmt.Errorf("not at %s/[honest/|clean/|solved/]NN/<name>.patch", dir)
			found = append(found, f)
			return nil
		}
		f.chapter = parts[0]
		raw, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		first, _, _ := strings.Cut(string(raw), "\n")
		if why, ok := strings.CutPrefix(first, "#"); ok && strings.TrimSpace(why) != "" {
			f.why = strings.TrimSpace(why)
			f.patches, f.err = parsePatch(string(raw))
		} else {
			f.err = errors.New(`the first line must be "# <what it tries>"`)
		}
		found = append(found, f)
		return nil
	})
	return found, err
}

// runForgeries is -forgeries: grade every forgery's chapter; exit 1 if one
// earned a point, or an honest change lost one.
func runForgeries(ctx context.Context, c config, chapters []rubric.Chapter, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintln(stderr, "coursecheck -forgeries:", err)
		return grade.ExitError
	}
	root, err := filepath.Abs(c.Root)
	if err != nil {
		return fail(err)
	}
	all, err := findForgeries(root, c.maint.forgeriesDir)
	if err != nil {
		return fail(err)
	}
	if c.maint.sample > 0 && c.maint.sample < len(all) {
		// make test grades a sample, chosen by the seed it prints.
		r := rand.New(rand.NewPCG(c.maint.sampleSeed(), 0x5eed))
		r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		all = all[:c.maint.sample]
		fmt.Fprintf(stdout, "forgeries: a sample of %d (-seed %d)\n", c.maint.sample, c.maint.sampleSeed())
	}
	selected := map[string]rubric.Chapter{}
	for _, ch := range chapters {
		selected[ch.ID] = ch
	}
	tmp, err := os.MkdirTemp("", "serverlab-forgeries-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(tmp)
	bad, n := 0, 0
	start := time.Now()
	for _, f := range all {
		ch, ok := selected[f.chapter]
		if !ok && f.err == nil {
			continue
		}
		n++
		verdict, detail := gradeForgery(ctx, c, root, tmp, f, ch)
		if verdict != "held" {
			bad++
		}
		fmt.Fprintf(stdout, "%-8s %s/%s: %s\n", verdict, f.chapter, f.name, f.why)
		if detail != "" {
			fmt.Fprintf(stdout, "         %s\n", strings.ReplaceAll(detail, "\n", "\n         "))
		}
	}
	fmt.Fprintf(stdout, "forgeries: %d graded, %d held, %d not (%s)\n", n, n-bad, bad, grade.Seconds(time.Since(start)))
	if bad > 0 {
		return grade.ExitRequirement
	}
	return grade.ExitOK
}

// gradeForgery applies f and grades its whole chapter: "held" when a forgery
// earned nothing (or an honest change kept everything).
func gradeForgery(ctx context.Context, c config, root, tmp string, f forgery, ch rubric.Chapter) (verdict, detail string) {
	if f.err != nil {
		return "invalid", f.err.Error()
	}
	target := "chapters"
	if f.honest || f.solved {
		target = c.maint.solutions
	}
	env := mutantEnv{root: root, solutions: target, timeout: c.Timeout, tmp: tmp}
	replace, err := env.apply(f.mutant)
	if err != nil {
		return "invalid", err.Error()
	}
	ov, err := writeOverlay(tmp, map[string]string{}, replace)
	if err != nil {
		return "invalid", err.Error()
	}
	rep, err := grade.Grade(ctx, grade.Options{Root: root, Target: target, Chapters: []rubric.Chapter{ch}, Timeout: c.Timeout,
		Jobs: c.Jobs, Overlay: ov})
	if err != nil {
		return "invalid", err.Error()
	}
	var wrong []string
	for _, ex := range rep.Chapters[0].Exercises {
		switch {
		case !f.honest && ex.Passed:
			wrong = append(wrong, fmt.Sprintf("%s scored %d: %s", ex.ID, ex.Points, "the judge was fooled"))
		case f.honest && !ex.Passed:
			wrong = append(wrong, fmt.Sprintf("%s lost its points (%s): %s", ex.ID, ex.Cause, grade.FirstLines([]byte(ex.Message), 3)))
		case f.solved && ex.Cause != grade.CauseIntegrity && ex.Cause != grade.CauseRace:
			wrong = append(wrong, fmt.Sprintf("%s: cause %s, want integrity or race: %s", ex.ID, ex.Cause, grade.FirstLines([]byte(ex.Message), 3)))
		case f.clean && ex.Cause != grade.CauseFailed:
			wrong = append(wrong, fmt.Sprintf("%s: cause %s, want failed: %s", ex.ID, ex.Cause, grade.FirstLines([]byte(ex.Message), 3)))
		}
	}
	wrong = append(wrong, leaked(rep)...)
	if len(wrong) == 0 {
		return "held", ""
	}
	slices.Sort(wrong)
	if f.honest || f.clean {
		return "CHARGED", strings.Join(wrong, "\n")
	}
	return "FORGED", strings.Join(wrong, "\n")
}
