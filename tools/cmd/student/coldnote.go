package main

import (
	"context"
	"fmt"
	"os"
	"sync"

	"serverlab/tools/internal/coldbuild"
)

// coldChecked makes the cold-cache check once per run: make watch re-runs
// tests on every save, and only its first build can be cold.
var coldChecked sync.Once

// warnColdBuild notes, before the first go test of the run, that the build
// cache lacks the course's dependencies and how long compiling them takes
// (tools/internal/coldbuild): the first make status took 1 min 50 s on a quiet
// 2-core machine (README). It is best effort: a failed check says nothing.
func (c *course) warnColdBuild(ctx context.Context, pkgs []string) {
	coldChecked.Do(func() {
		var flags []string
		how := "without -race"
		if c.race {
			flags, how = []string{"-race"}, "under -race"
		}
		stale, err := coldbuild.Stale(ctx, goTool(), c.root, os.Environ(), flags, pkgs...)
		if err != nil {
			return
		}
		if note := coldbuild.Note(stale, how, "2 min"); note != "" {
			fmt.Fprintln(c.log, "note: "+note)
		}
	})
}
