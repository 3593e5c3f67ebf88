package grade

import (
	"context"
	"fmt"
	"io"
	"path"
	"slices"

	"serverlab/tools/internal/coldbuild"
	"serverlab/tools/internal/rubric"
)

// warnColdBuild prints, before the first chapter is built, that the build
// cache lacks the course's dependencies and how long compiling them takes
// (tools/internal/coldbuild). The students' code is built under -race and, for the
// chapters the judge drives, the judge without it, so a cold make grade
// compiles the standard library and SQLite twice: 176 s of CPU for every
// chapter against make status's 116 s (docs/grading.md, "The first build").
// It prints nothing when w is nil (-q) or the cache is warm; it is best
// effort, and a failed check says nothing either.
func warnColdBuild(ctx context.Context, w io.Writer, root, target string, chapters []rubric.Chapter) {
	if w == nil || len(chapters) == 0 {
		return
	}
	pkgs := make([]string, len(chapters))
	for i, ch := range chapters {
		pkgs[i] = "./" + path.Join(target, ch.ID)
	}
	stale, err := coldbuild.Stale(ctx, "go", root, buildEnv(), []string{"-race"}, pkgs...)
	if err != nil {
		return
	}
	judge, err := coldbuild.Stale(ctx, "go", root, buildEnv(), []string{"-tags", "judge"}, pkgs...)
	if err != nil {
		return
	}
	stale = slices.Concat(stale, judge)
	if note := coldbuild.Note(stale, "under -race (and without it, for the judge)", "2-3 min"); note != "" {
		fmt.Fprintln(w, "grade: "+note)
	}
}
