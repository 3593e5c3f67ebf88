//go:build !linux

package web

import "os"

// fastOpener is empty here: openat2(2) is Linux's (see docroot_linux.go).
type fastOpener struct{}

func (fastOpener) close() {}

// open opens name, a local slash-separated path, under the root.
func (d *Docroot) open(name string) (*os.File, error) { return d.openRoot(name) }
