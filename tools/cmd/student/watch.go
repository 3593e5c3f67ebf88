package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"serverlab/tools/internal/rubric"
)

// watchConfig says what to watch and where to report.
type watchConfig struct {
	Chapter  string // "03" (or "3")
	Exercise string // "3_4" or "3.4"; empty: the whole chapter
	Poll     bool   // poll instead of file-system notifications
	Out      io.Writer

	debounce time.Duration           // quiet time after the last change before a run; default 300 ms
	interval time.Duration           // polling interval; default 1 s
	onRun    func(map[string]result) // called after each run (tests)
	onReady  func()                  // called once the watcher is in place (tests)
}

// watch runs the chapter's tests (or one exercise's), then again after every
// change to a Go file of the chapter, until ctx ends. Editors that save by
// writing a new file and renaming it over the old one are caught because the
// watcher watches folders, not files. Without file-system notifications it
// polls, and says so.
func (c *course) watch(ctx context.Context, cfg watchConfig) error {
	ch, only, err := c.watchTarget(cfg.Chapter, cfg.Exercise)
	if err != nil {
		return err
	}
	if ok, why := supported(ch.ID); !ok {
		return fmt.Errorf("chapter %s %s", ch.ID, why)
	}
	if cfg.debounce == 0 {
		cfg.debounce = 300 * time.Millisecond
	}
	if cfg.interval == 0 {
		cfg.interval = time.Second
	}
	dir := filepath.Join(c.root, chapterDir(ch.ID))
	changes := make(chan struct{}, 1)
	stop, how, err := c.startWatching(ctx, dir, cfg, changes)
	if err != nil {
		return err
	}
	defer stop()
	what := "chapter " + ch.ID
	if only != nil {
		what = "exercise " + only.ID
	}
	fmt.Fprintf(cfg.Out, "watching %s (%s) for %s; Ctrl-C stops\n", filepath.ToSlash(chapterDir(ch.ID)), how, what)
	if cfg.onReady != nil {
		cfg.onReady()
	}
	for {
		if err := c.watchRun(ctx, cfg, ch, only); err != nil {
			if interrupted(ctx) {
				return nil
			}
			return err
		}
		// Wait for a change, then for the editor to finish (a save can be
		// several events: write a temporary file, rename, chmod).
		select {
		case <-ctx.Done():
			return nil
		case <-changes:
		}
		for quiet := false; !quiet; {
			select {
			case <-ctx.Done():
				return nil
			case <-changes:
			case <-time.After(cfg.debounce):
				quiet = true
			}
		}
	}
}

// interrupted says whether ctx ends within a moment: a Ctrl-C reaches go
// test, run by watchRun, and this process together, and go test may fail
// of it before the signal handler has cancelled ctx. Ctrl-C is how a watch
// ends, and it ends quietly (exit status 0, so make adds no "Error 1").
func interrupted(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	case <-time.After(time.Second):
		return false
	}
}

// watchTarget validates CH and EX against the rubric.
func (c *course) watchTarget(chArg, exArg string) (rubric.Chapter, *rubric.Exercise, error) {
	if strings.TrimSpace(chArg) == "" {
		return rubric.Chapter{}, nil, usagef("usage: make watch CH=NN [EX=N_M]; %s", c.chapterList())
	}
	ch, err := c.findChapter(chArg)
	if err != nil {
		return rubric.Chapter{}, nil, err
	}
	if strings.TrimSpace(exArg) == "" {
		return ch, nil, nil
	}
	id := normalizeExercise(exArg)
	var ids []string
	for _, ex := range ch.Exercises {
		if ex.ID == id {
			return ch, &ex, nil
		}
		ids = append(ids, strings.ReplaceAll(ex.ID, ".", "_"))
	}
	return rubric.Chapter{}, nil, usagef("chapter %s has no exercise %q; its exercises are: %s", ch.ID, exArg, strings.Join(ids, " "))
}

// startWatching starts reporting changes to Go files under dir on changes,
// with fsnotify if it can, else by polling. It returns how it watches.
func (c *course) startWatching(ctx context.Context, dir string, cfg watchConfig, changes chan<- struct{}) (stop func(), how string, err error) {
	if !cfg.Poll {
		w, err := fsnotify.NewWatcher()
		if err == nil {
			if err = addTree(w, dir); err == nil {
				done := make(chan struct{})
				go notifyLoop(w, changes, done)
				return func() { w.Close(); <-done }, "file-system notifications", nil
			}
			w.Close()
		}
		fmt.Fprintf(cfg.Out, "note: file-system notifications are not available (%v): polling every %v instead\n", err, cfg.interval)
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go pollLoop(pctx, dir, cfg.interval, changes, done)
	return func() { cancel(); <-done }, fmt.Sprintf("polling every %v", cfg.interval), nil
}

// addTree watches dir and every folder below it.
func addTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return w.Add(p)
		}
		return nil
	})
}

func notifyLoop(w *fsnotify.Watcher, changes chan<- struct{}, done chan<- struct{}) {
	defer close(done)
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					_ = addTree(w, ev.Name) // a new package folder
				}
			}
			// Write, Create (a rename-on-save lands here), Remove, Rename:
			// anything but a bare Chmod of a Go file.
			if strings.HasSuffix(ev.Name, ".go") && ev.Op&^fsnotify.Chmod != 0 {
				notify(changes)
			}
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
		}
	}
}

func pollLoop(ctx context.Context, dir string, every time.Duration, changes chan<- struct{}, done chan<- struct{}) {
	defer close(done)
	last := snapshot(dir)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if now := snapshot(dir); now != last {
				last = now
				notify(changes)
			}
		}
	}
}

// snapshot fingerprints the Go files under dir by name, size and time.
func snapshot(dir string) string {
	var b strings.Builder
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		}
		return nil
	})
	return b.String()
}

// notify notes a change without blocking: one pending change is enough.
func notify(changes chan<- struct{}) {
	select {
	case changes <- struct{}{}:
	default:
	}
}

// watchRun runs the tests once and reports: each exercise's outcome, the
// first failure in full, and the chapter's progress line.
func (c *course) watchRun(ctx context.Context, cfg watchConfig, ch rubric.Chapter, only *rubric.Exercise) error {
	w := cfg.Out
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		fmt.Fprint(w, "\033[H\033[2J") // clear the screen, as watch(1) does
	}
	// The header names the run as it is, -race included when on, as the
	// grader's: a student who copies it gets the same verdict.
	race := ""
	if c.race {
		race = " -race"
	}
	cmd := fmt.Sprintf("go test%s ./chapters/%s/...", race, ch.ID)
	if only != nil {
		cmd += " -run " + only.RunPattern()
	}
	fmt.Fprintf(w, "── %s  %s\n", time.Now().Format("15:04:05"), cmd)
	if note := busyBefore(loadNow(), "the tests"); note != "" {
		fmt.Fprintln(w, note)
	}
	key, err := c.inputKey(ch.ID)
	if err != nil {
		return err
	}
	got, err := c.runTests(ctx, []rubric.Chapter{ch}, only)
	if err != nil {
		return err
	}
	cr := c.loadResults(ch.ID)
	if cr.Key != key || cr.Results == nil {
		cr = chapterResults{Key: key, Results: map[string]result{}}
	}
	var first *result
	var firstID string
	for _, ex := range ch.Exercises {
		r, ran := got[ex.ID]
		if !ran {
			continue
		}
		cr.Results[ex.ID] = r
		mark := "ok  "
		if !r.Pass {
			mark = "FAIL"
			if first == nil {
				first, firstID = &r, ex.ID
			}
		}
		detail := ""
		if !r.Pass {
			detail = " (" + r.Cause + ")"
		}
		fmt.Fprintf(w, "%s %-5s %s%s\n", mark, ex.ID, ex.Title, detail)
	}
	if first != nil {
		fmt.Fprintf(w, "\nfirst failure, %s:\n", firstID)
		for _, l := range first.Output {
			fmt.Fprintln(w, l)
		}
		fmt.Fprintln(w)
	}
	if err := c.saveResults(ch.ID, cr); err != nil {
		fmt.Fprintf(w, "note: cannot keep the results: %v\n", err)
	}
	if only != nil {
		fmt.Fprintln(w, focusLine(ch, cr, *only, got[only.ID]))
	} else {
		fmt.Fprintln(w, progressLine(ch, cr, c.nextIn(ch, cr)))
	}
	if cfg.onRun != nil {
		cfg.onRun(got)
	}
	return nil
}

// nextIn is the first exercise of the chapter that does not pass, with
// where it starts.
func (c *course) nextIn(ch rubric.Chapter, cr chapterResults) string {
	for _, ex := range ch.Exercises {
		if r, ok := cr.Results[ex.ID]; !ok || !r.Pass {
			return ex.ID + " — " + c.startingPoint(ch, ex)
		}
	}
	return ""
}

// progressLine is the chapter's line after each run: the bar and points
// over every exercise whose result still holds for the current code.
func progressLine(ch rubric.Chapter, cr chapterResults, next string) string {
	got, passed := score(ch, cr)
	line := fmt.Sprintf("chapter %s: %s %d/%d points, %d of %d pass", ch.ID, bar(got, ch.MaxPoints(), 20), got, ch.MaxPoints(), passed, len(ch.Exercises))
	unknown := 0
	for _, ex := range ch.Exercises {
		if _, ok := cr.Results[ex.ID]; !ok {
			unknown++
		}
	}
	if unknown > 0 {
		line += fmt.Sprintf(" (%d not run since your last change: make status runs them)", unknown)
	}
	if next != "" {
		line += "; next: " + next
	} else {
		line += "; the chapter is done"
	}
	return line
}

// focusLine is the line after each run of one exercise (watch EX=…): how
// it did, and what to watch once it passes. It says only what it knows: an
// edit makes every result of the chapter unknown until it runs again, so
// the points are those of the exercises run since (none but this one: no
// points at all, rather than "0/100"), and an exercise named next that has
// not run since is said to be unknown, not failing.
func focusLine(ch rubric.Chapter, cr chapterResults, ex rubric.Exercise, r result) string {
	got, _ := score(ch, cr)
	known := 0
	for _, e := range ch.Exercises {
		if _, ok := cr.Results[e.ID]; ok {
			known++
		}
	}
	var line string
	switch {
	case known == len(ch.Exercises):
		line = fmt.Sprintf("chapter %s: %d/%d points; exercise %s ", ch.ID, got, ch.MaxPoints(), ex.ID)
	case known > 1:
		line = fmt.Sprintf("chapter %s: %d/%d points from the %d exercises run since your last change (make status "+
			"runs the other %d); exercise %s ", ch.ID, got, ch.MaxPoints(), known, len(ch.Exercises)-known, ex.ID)
	default:
		line = fmt.Sprintf("chapter %s: exercise %s ", ch.ID, ex.ID)
	}
	if !r.Pass {
		return line + fmt.Sprintf("does not pass yet (%s): the first failure is above", r.Cause)
	}
	line += fmt.Sprintf("passes (%d points)", ex.Points)
	if after, ok := nextNotPassing(ch, cr, ex); ok {
		line += fmt.Sprintf("; then: make watch CH=%s EX=%s (%s", ch.ID, strings.ReplaceAll(after.ID, ".", "_"), after.Title)
		if _, ran := cr.Results[after.ID]; !ran {
			line += "; not run since your last change: make status says which exercises pass"
		}
		return line + fmt.Sprintf("), or CH=%s alone for the whole chapter", ch.ID)
	}
	return line + fmt.Sprintf("; every exercise of the chapter passed when last run: make watch CH=%s runs them all again", ch.ID)
}

// nextNotPassing is the exercise to watch after ex: the first, in chapter
// order after ex and then from the chapter's start, that failed when last
// run; else the first that has not run since the last change.
func nextNotPassing(ch rubric.Chapter, cr chapterResults, ex rubric.Exercise) (rubric.Exercise, bool) {
	i := slices.IndexFunc(ch.Exercises, func(e rubric.Exercise) bool { return e.ID == ex.ID })
	var unknown *rubric.Exercise
	for k := 1; k < len(ch.Exercises); k++ {
		after := ch.Exercises[(i+k)%len(ch.Exercises)]
		r, ok := cr.Results[after.ID]
		if ok && !r.Pass {
			return after, true
		}
		if !ok && unknown == nil {
			unknown = &after
		}
	}
	if unknown != nil {
		return *unknown, true
	}
	return rubric.Exercise{}, false
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
