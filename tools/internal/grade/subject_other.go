//go:build !unix

package grade

import (
	"os"
	"os/exec"
	"time"
)

// judged reports whether this platform can run exercises as a judge and a
// subject. Windows cannot pass descriptors over its sockets, and the grader
// has no other way to grade: Grade refuses.
const judged = false

type subjectProc struct {
	judgeEnd, tellPID *os.File
	scratch           string
	cmd               *exec.Cmd
}

func (s *subjectProc) start() error { return nil }

func (s *subjectProc) startJudge(cmd *exec.Cmd) error { return startTracked(cmd) }

func (rn *runner) newSubject(exercise) (*subjectProc, error) { return nil, ErrPlatform }

func (s *subjectProc) finish(time.Duration) SubjectRun { return SubjectRun{} }

func awaitProtected(int) {}
