// Package linkname reaches into the harness's unexported state with
// //go:linkname, to read the run's secret and forge a record.
package linkname

import (
	_ "unsafe" // for go:linkname

	_ "serverlab/tests/testkit"
)

//go:linkname recordState serverlab/tests/testkit.record
var recordState struct{ secret []byte }

// Secret is what a forger would sign records with.
func Secret() []byte { return recordState.secret }
