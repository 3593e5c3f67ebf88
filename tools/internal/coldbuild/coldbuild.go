// Package coldbuild says, before a build starts, that the go command is
// about to compile the course's dependencies from nothing: on the first
// build on a machine, after `go clean -cache`, or with a new Go. Then the
// first `make status` or `make grade` spends most of its time compiling the
// standard library and SQLite (modernc.org/sqlite, whose engine and libc are
// C translated to Go: about a third of the compiler's work) under the race
// detector, and prints nothing for minutes. Saying so up front, with how
// long it usually takes, keeps a student from thinking it hangs.
package coldbuild

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// listTimeout bounds the check: it is a courtesy, and must never be what
// makes a run slow.
const listTimeout = 30 * time.Second

// listFormat prints, for every package a build would have to compile, its
// import path and whether it is the main module's.
const listFormat = `{{if .Stale}}{{.ImportPath}}{{"\t"}}{{with .Module}}{{.Main}}{{end}}{{end}}`

// Stale returns the packages outside the main module (the standard library
// and third-party modules) that `go test <flags> pkgs` would compile because
// the build cache does not hold them. It runs `go list -deps -test` in dir
// with env, which compiles nothing: it only hashes the sources (well under
// a second on a warm machine). The course's own packages are left out: they
// change all the time and build in seconds.
func Stale(ctx context.Context, goTool, dir string, env, flags []string, pkgs ...string) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	args := append([]string{"list", "-e", "-deps", "-test", "-f", listFormat}, flags...)
	cmd := exec.CommandContext(ctx, goTool, append(args, pkgs...)...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	return outsideModule(string(out)), nil
}

// outsideModule picks from go list's lines (listFormat) the packages that
// are not the main module's: not "true" in the second column, and not a
// test variant ("p [p.test]") or test main ("p.test"), which only the
// module's own packages have.
func outsideModule(out string) []string {
	var stale []string
	for _, line := range strings.Split(out, "\n") {
		path, main, _ := strings.Cut(line, "\t")
		if path == "" || main == "true" || strings.Contains(path, " [") || strings.HasSuffix(path, ".test") {
			continue
		}
		stale = append(stale, path)
	}
	return stale
}

// Note is what to print before a build that must compile stale (from
// Stale), or "" when there is nothing worth saying. how says how the build
// compiles them ("under -race"), quiet how long that takes on a quiet
// 2-core machine, as measured (docs/grading.md, "The first build").
func Note(stale []string, how, quiet string) string {
	if len(stale) < minCold {
		return ""
	}
	what := "the standard library"
	if slices.ContainsFunc(stale, func(p string) bool { return strings.HasPrefix(p, "modernc.org/sqlite") }) {
		what = "the standard library and SQLite"
	}
	return fmt.Sprintf("first build here: compiling %d packages the course depends on (%s) %s before any test runs. "+
		"That takes about %s on a quiet 2-core machine, several times longer on a busy one; "+
		"later runs reuse them from Go's build cache (go env GOCACHE) and start in seconds.", len(stale), what, how, quiet)
}

// minCold is how many stale packages make a build "cold": a handful (a
// dependency upgraded) builds in seconds and needs no warning.
const minCold = 20
