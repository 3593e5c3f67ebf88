//go:build unix

package filelock

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestSecondOpenRefused: while one holder has the file open, a second Open
// fails with ErrInUse; once the first closes it, it succeeds.
func TestSecondOpenRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.lock")
	first, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if second, err := Open(path); !errors.Is(err, ErrInUse) {
		if second != nil {
			second.Close()
		}
		t.Fatalf("a second Open while the first holds the lock: err = %v, want ErrInUse", err)
	}
	first.Close()
	again, err := Open(path)
	if err != nil {
		t.Fatalf("Open after the holder closed: %v", err)
	}
	again.Close()
}
