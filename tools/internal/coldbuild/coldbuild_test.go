package coldbuild

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStale builds a one-package module in an empty build cache: before the
// build, its standard-library dependency is stale and the module's own
// package is left out; after it, nothing is.
func TestStale(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write("go.mod", "module example.com/m\n\ngo 1.26\n")
	write("m.go", "package m\n\nimport \"unicode/utf8\"\n\nfunc Valid(s string) bool { return utf8.ValidString(s) }\n")
	env := append(os.Environ(), "GOCACHE="+t.TempDir(), "GOFLAGS=", "GOWORK=off")

	stale, err := Stale(context.Background(), "go", dir, env, nil, "./...")
	require.NoError(t, err)
	assert.Equal(t, []string{"unicode/utf8"}, stale, "an empty cache: the dependency is stale, example.com/m is the module's own")

	build := exec.Command("go", "build", "./...")
	build.Dir, build.Env = dir, env
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	stale, err = Stale(context.Background(), "go", dir, env, nil, "./...")
	require.NoError(t, err)
	assert.Empty(t, stale, "after go build, the cache holds every dependency")
}

// TestOutsideModule keeps what a build outside the module would compile and
// drops the module's packages, their test variants and test mains.
func TestOutsideModule(t *testing.T) {
	out := "fmt\t\nmodernc.org/sqlite\tfalse\nserverlab/chapters/07\ttrue\n" +
		"serverlab/chapters/07 [serverlab/chapters/07.test]\ttrue\nserverlab/chapters/07.test\t\n\n"
	assert.Equal(t, []string{"fmt", "modernc.org/sqlite"}, outsideModule(out))
}

// TestNote warns about a cold build, names SQLite when it is among the
// stale packages, and says nothing about a warm one.
func TestNote(t *testing.T) {
	std := make([]string, minCold)
	for i := range std {
		std[i] = "std/p" + string(rune('a'+i))
	}
	assert.Empty(t, Note(nil, "under -race", "2 min"), "a warm cache")
	assert.Empty(t, Note(std[:minCold-1], "under -race", "2 min"), "a few stale packages build in seconds")

	note := Note(std, "under -race", "2 min")
	assert.Contains(t, note, "compiling 20 packages")
	assert.Contains(t, note, "about 2 min")
	assert.Contains(t, note, "under -race")
	assert.NotContains(t, note, "SQLite")

	withSQLite := slices.Concat(std, []string{"modernc.org/sqlite/lib"})
	assert.Contains(t, Note(withSQLite, "under -race", "2 min"), "the standard library and SQLite")
}
