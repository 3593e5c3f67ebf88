package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadKeyedMethodKeys: a method's mutant key holds a space (its
// receiver), so equivalent.txt and open.txt separate key and reason with two
// spaces. Cut at the first space, every method's entry was keyed by its file
// and receiver alone and never matched: its survivors were counted as
// survived, not equivalent or open.
func TestReadKeyedMethodKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keyed.txt")
	text := "# a comment\n" +
		"04/rwlock.go:(RWLock) Lock:const:07ec1657  readers > 1 in the wait loop\n" +
		"05/drain.go:DrainLines:const:96b7b764  i+0 instead of i+1\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readKeyed(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"04/rwlock.go:(RWLock) Lock:const:07ec1657": "readers > 1 in the wait loop",
		"05/drain.go:DrainLines:const:96b7b764":     "i+0 instead of i+1",
	}
	if len(got) != len(want) {
		t.Fatalf("readKeyed(%q) = %q, want %q", text, got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("readKeyed: key %q has reason %q, want %q (all: %q)", k, got[k], v, got)
		}
	}
}

// TestKeyedFilesParse: every entry of the real equivalent.txt and open.txt
// has a key of the form NN/file:decl:op:hash and a reason.
func TestKeyedFilesParse(t *testing.T) {
	for _, name := range []string{equivalentFile, openFile} {
		entries, err := readKeyed(filepath.Join("..", "..", "..", filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		for key, reason := range entries {
			if reason == "" {
				t.Errorf("%s: entry %q has no reason (two spaces between key and reason)", name, key)
			}
			if ok, _ := filepath.Match("[0-9][0-9]/*:*:*:????????", key); !ok {
				t.Errorf("%s: %q is not a mutant key (NN/file:decl:op:hash)", name, key)
			}
		}
	}
}
