package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The mirror writes only the files a chapter already has: a file only the
// solution has is the answer's (chapter 06's fast paths), and the mirror
// cannot tell it from a new file whose stubs the chapter still lacks (it
// cannot write a stub: a stub is the maintainer's, with its TODO). What it
// can tell is that the chapter's given code, as mirrored, calls into such a
// file: then the chapter does not compile, and the maintainer who added
// limit.go to solutions/04 would meet only a build error later. newFiles
// turns that into a problem of make chapters that names the file.

// newFiles returns, for each non-test Go file of solDir that chDir lacks
// and whose declarations the chapter's mirrored files use without
// declaring, a result with that problem. results are mirrorChapter's for
// the chapter (the files as make chapters writes them).
func newFiles(chDir, solDir, chRel string, results []mirrorResult) ([]mirrorResult, error) {
	solFiles, err := filepath.Glob(filepath.Join(solDir, "*.go"))
	if err != nil {
		return nil, err
	}
	declared, used := map[string]bool{}, map[string][]string{} // name → chapter files that use it
	for _, r := range results {
		name := filepath.Base(r.rel)
		rel := strings.TrimPrefix(r.rel, chRel+"/")
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || isOpenTrack(rel) || r.want == nil {
			continue
		}
		decls, err := declsOf(name, r.want)
		if err != nil {
			continue // the mirror reports its own parse errors
		}
		for _, d := range decls {
			for _, n := range d.defines {
				declared[n] = true
			}
			for n := range d.mentions {
				if !slices.Contains(used[n], name) {
					used[n] = append(used[n], name)
				}
			}
		}
	}
	var out []mirrorResult
	for _, f := range solFiles {
		name := filepath.Base(f)
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if _, err := os.Stat(filepath.Join(chDir, name)); !os.IsNotExist(err) {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		decls, err := declsOf(name, src)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		var needed []string
		for _, d := range decls {
			for _, n := range d.defines {
				if n != "_" && !declared[n] && len(used[n]) > 0 {
					needed = append(needed, fmt.Sprintf("%s (used by %s)", n, strings.Join(used[n], ", ")))
				}
			}
		}
		if len(needed) == 0 {
			continue // the answer's own file: the chapter does not call it
		}
		out = append(out, mirrorResult{rel: chRel + "/" + name, problems: []string{fmt.Sprintf(
			"%s is only in the solution, and the chapter's given code uses what it declares: %s. "+
				"make chapters does not create a new file (a file only the solution has may be the answer): "+
				"copy it to %s/%s with each exercise's code replaced by its stub (full doc comment, TODO(ex N.K), "+
				"a value that fails the check), then run make chapters again",
			name, strings.Join(needed, "; "), chRel, name)}})
	}
	return out, nil
}
