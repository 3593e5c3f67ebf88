//go:build unix

package judge

import (
	"fmt"
	"os"
)

// Bounds on what the subject brings into the judge. A message is already at
// most maxMessage bytes (frameLimit) and is gone once handled; what is not
// gone is what the suite keeps of the subject's calls into the judge's own
// objects: the bytes a student's WriteFrame writes into the suite's buffer,
// the lines it logs, the errors it returns (errTable keeps each). A subject
// that writes a gigabyte into the judge's writer, 16 MiB a call, would make
// the judge, the process whose output is the verdict, as large as it likes
// (cheater4 a20: 14.8 GB). So the judge's end counts the data of every call
// the subject makes into it: a call of more than maxCallIn bytes, or one past
// maxCallsIn in all (a judge runs one exercise), ends the link with the
// reason, and every call of the suite's then fails with that reason: the
// exercise loses its points (cause failed), and the judge stays small.
const (
	maxCallIn  = 16 << 20
	maxCallsIn = 64 << 20
	// maxErrText is the most of a received error's text the judge keeps,
	// and maxErrIs the most identities it believes of one error.
	maxErrText = 16 << 10
	maxErrIs   = 1 << 10
)

// valueBytes is the data v carries: its strings and byte slices, its
// elements', and its error's text and identities.
func valueBytes(v *value) int {
	n := len(v.Str) + len(v.Bytes) + len(v.Kind)
	for _, m := range v.Methods {
		n += len(m)
	}
	if v.Err != nil {
		n += len(v.Err.ID) + len(v.Err.Text)
		for _, is := range v.Err.Is {
			n += len(is)
		}
	}
	for i := range v.Elems {
		n += valueBytes(&v.Elems[i])
	}
	return n
}

// admit counts an incoming call m against the judge's bounds, and ends the
// link if it breaks one (false: m is not to be served). The subject's end
// admits everything: the judge is the course's.
func (p *peer) admit(m *message) bool {
	if p.side != "j" || m.Reply {
		return true
	}
	n := len(m.Method)
	for i := range m.Args {
		n += valueBytes(&m.Args[i])
	}
	p.mu.Lock()
	p.inBytes += int64(n)
	total := p.inBytes
	p.mu.Unlock()
	var err error
	switch {
	case n > maxCallIn:
		err = fmt.Errorf("judge: the subject called %s with %d bytes of data (at most %d a call): refused, the exercise fails",
			describeCall(m.Handle, m.Method), n, maxCallIn)
	case total > maxCallsIn:
		err = fmt.Errorf("judge: the subject has passed %d bytes of data into the judge's objects (at most %d an exercise; the last call %s): refused, the exercise fails",
			total, maxCallsIn, describeCall(m.Handle, m.Method))
	default:
		return true
	}
	fmt.Fprintln(os.Stderr, err)
	p.lose(boundError{err})
	return false
}

// boundError is a bound admit enforced: the reason the link was ended.
type boundError struct{ error }

// boundErr cuts what the judge keeps of a received error to maxErrText
// bytes of text and maxErrIs identities.
func boundErr(side string, v *errValue) {
	if side != "j" || v == nil {
		return
	}
	if len(v.Text) > maxErrText {
		v.Text = fmt.Sprintf("%s… (%d more bytes cut by the judge)", v.Text[:maxErrText], len(v.Text)-maxErrText)
	}
	if len(v.Is) > maxErrIs {
		v.Is = v.Is[:maxErrIs]
	}
}

// lostErr is what a call returns once the link is gone: errLost, with the
// reason when the judge itself ended it.
func (p *peer) lostErr() error {
	p.mu.Lock()
	reason := p.lostReason
	p.mu.Unlock()
	if _, ok := reason.(boundError); ok {
		return fmt.Errorf("%w: %v", errLost, reason)
	}
	return errLost
}

// Refused is why the judge ended the link itself, because the subject broke
// one of its bounds ("" if it did not): the check fails with it, a verdict
// on the student's code rather than a subject that went away.
func Refused() string {
	if !IsJudge() {
		return ""
	}
	p, err := judgeSide()
	if err != nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if b, ok := p.lostReason.(boundError); ok {
		return b.Error()
	}
	return ""
}

// maxReport is the most of a leak report or goroutine dump the judge takes
// from the subject: the suites print them in the verdict, and a real one is
// a few KiB.
const maxReport = 1 << 20

// boundReport cuts a report the subject made to maxReport bytes, saying so.
func boundReport(s string) string {
	if len(s) <= maxReport {
		return s
	}
	return fmt.Sprintf("%s\n… (%d more bytes cut by the judge)", s[:maxReport], len(s)-maxReport)
}
