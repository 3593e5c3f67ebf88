package main

import (
	"context"
	"fmt"
	"io"
	"path"
	"slices"

	"serverlab/tools/coldbuild"
	"serverlab/tools/grade/rubric"
)

// warnColdBuild prints, before the first chapter is built, that the build
// cache lacks the course's dependencies and how long compiling them takes
// (tools/coldbuild): the students' code is built under -race and, for
// chapters the judge drives, the judge without it, so a cold cache compiles
// the standard library and SQLite twice: a whole make grade took 3 min 20 s
// at load 8 on 2 cores (176 s of CPU), where make status took 2 min 23 s
// (116 s), and make status takes 1 min 50 s on a quiet machine. It prints nothing when w is nil
// (-q) or the cache is warm; it is best effort, and a failed check says
// nothing either.
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
	if judged {
		judge, err := coldbuild.Stale(ctx, "go", root, buildEnv(), []string{"-tags", "judge"}, pkgs...)
		if err != nil {
			return
		}
		stale = slices.Concat(stale, judge)
	}
	how := "under -race"
	if judged {
		how = "under -race (and without it, for the judge)"
	}
	if note := coldbuild.Note(stale, how, "2-3 min"); note != "" {
		fmt.Fprintln(w, "grade: "+note)
	}
}
