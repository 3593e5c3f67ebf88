//go:build unix && !linux

package judge

// sockState is a no-op where the judge does not restore socket options
// (see sockstate_linux.go).
type sockState struct{}

func saveSockState(int) sockState { return sockState{} }
func (sockState) restore(int)     {}
