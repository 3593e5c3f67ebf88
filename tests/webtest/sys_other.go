//go:build !unix

package webtest

import (
	"errors"
	"os"
)

// mkfifo fails: there are no named pipes in the file system here.
func mkfifo(path string) error { return errors.ErrUnsupported }

// kill kills process pid.
func kill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
