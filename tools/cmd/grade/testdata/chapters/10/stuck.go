// Package stuck has a stub that blocks forever: the watchdog's message must
// show where, in the student's code.
package stuck

var never = make(chan struct{})

// Wait waits for a value that never comes.
func Wait() int {
	<-never
	return 0
}
