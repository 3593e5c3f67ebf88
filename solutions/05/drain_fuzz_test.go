//go:build linux

package evloop_test

import (
	"testing"

	"serverlab/tests/epolltest"
)

// The fuzz targets of the splitters (exercises 5.1 and 5.2): run them with
// go test -fuzz FuzzDrainLines ./chapters/05/ (they skip while a stub).
func FuzzDrainFrames(f *testing.F) { epolltest.FuzzDrainFrames(f, impl) }
func FuzzDrainLines(f *testing.F)  { epolltest.FuzzDrainLines(f, impl) }
