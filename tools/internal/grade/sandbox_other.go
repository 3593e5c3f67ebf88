//go:build !linux

package grade

import (
	"errors"
	"os/exec"
)

// sandboxSpec is Linux's (sandbox_linux.go).
type sandboxSpec struct {
	Visible  []string
	Binary   string
	Writable string
	Dir      string
	UID, GID int
	Cover    bool
	Cgroup   string
}

// Namespaces are Linux's: elsewhere the students' code runs as the -user,
// or as the grader's user.
func sandboxAvailable() bool { return false }

func sandboxed(*exec.Cmd, sandboxSpec) error { return errors.New("no sandbox on this system") }

func sandboxSees() string { return "" }

// subjectBox is Linux's (sandbox_limits_linux.go): elsewhere nothing bounds a
// subject but its time.
type subjectBox struct{ cgroup string }

// subjectFileSize is Linux's; nothing here sets a limit on file size.
var subjectFileSize uint64

func newSubjectBox(string, int, int) (*subjectBox, error) { return nil, nil }

func (*subjectBox) release() string { return "" }

func limitsNote() string { return "" }
