//go:build !linux

package webtest

import "errors"

// adoptOrphans is only possible on Linux; elsewhere an orphan goes to init
// (or to whichever subreaper the system has).
func adoptOrphans() (release func(pid int), err error) { return nil, errors.ErrUnsupported }
