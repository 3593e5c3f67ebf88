// Package procs runs the servers the course's tools measure and check (the
// experiment runner, the interop checks, the soak tests) as child processes:
// it builds a Go server package or takes an external program, starts it,
// waits until it listens, tells whether it is still alive and how it ended, and
// stops it — SIGTERM, as an operator would, then SIGKILL after a grace
// period, to its whole process group if asked.
//
// Every tool used to carry its own copy of this; the copies drifted (which
// signal, how long to wait, what counts as ready). What differs between the
// tools on purpose is a parameter here: the grace period, whether the server
// gets its own process group, and whether readiness is "a dial succeeds" or
// "the process itself holds the listening socket".
package procs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Spec is a program to start.
type Spec struct {
	Path string   // the program
	Args []string // its arguments, without the program's name
	Dir  string   // its working folder; "" = this process's
	// Env is added to this process's environment ("KEY=value"); nil: the
	// environment as it is.
	Env []string
	// Stdout and Stderr receive its output; nil: discarded. A pipe nobody
	// reads would block a server that prints every message, so give a
	// writer that never blocks (a buffer, a file).
	Stdout, Stderr io.Writer
	// Group runs it in a process group of its own, and Stop and Kill then
	// signal the whole group, so that they also end what it started (CGI
	// programs, forked workers). The group does not get the terminal's ^C:
	// a tool that sets Group must stop the server itself.
	Group bool
}

// Process is a started program.
type Process struct {
	name  string
	cmd   *exec.Cmd
	group bool
	done  chan struct{} // closed once the process has exited and been reaped
	err   error         // cmd.Wait's result, set before done is closed
}

// Start starts s. It does not wait for anything: see WaitDialable and
// WaitListening.
func Start(s Spec) (*Process, error) {
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Dir = s.Dir
	if s.Env != nil {
		cmd.Env = append(os.Environ(), s.Env...)
	}
	cmd.Stdout, cmd.Stderr = s.Stdout, s.Stderr
	if s.Group {
		ownGroup(cmd)
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{name: filepath.Base(s.Path), cmd: cmd, group: s.Group, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Name is the program's file name, for messages.
func (p *Process) Name() string { return p.name }

// PID is the process's id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Alive reports whether the process is still running.
func (p *Process) Alive() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Err is how the process exited (nil: status 0), once Done is closed.
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Ending says how Stop found or left the process.
type Ending int

const (
	ExitedBefore Ending = iota // it had exited before Stop was called
	Terminated                 // it exited on SIGTERM within the grace period
	Killed                     // it ignored SIGTERM for the grace period and was killed
)

// Stop asks the process to exit (SIGTERM; to its group if Spec.Group), kills
// it (SIGKILL) if it is still running after grace, and returns once it has
// exited. Stopping a process that has exited does nothing.
func (p *Process) Stop(grace time.Duration) Ending {
	if !p.Alive() {
		return ExitedBefore
	}
	if err := p.signal(syscall.SIGTERM); err != nil {
		p.signal(syscall.SIGKILL) // no SIGTERM here (or it has just exited)
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return Terminated
	case <-t.C:
		p.Kill()
		return Killed
	}
}

// Kill ends the process (and its group, if Spec.Group) with SIGKILL and
// returns once it has exited. Killing a process that has exited does
// nothing (its pid may be someone else's by now).
func (p *Process) Kill() {
	if !p.Alive() {
		return
	}
	p.signal(syscall.SIGKILL)
	<-p.done
}

func (p *Process) signal(sig syscall.Signal) error {
	if p.group {
		return signalGroup(p.PID(), sig)
	}
	return p.cmd.Process.Signal(sig)
}

// ErrExited is wrapped by the waits when the process exits before it listens.
var ErrExited = errors.New("exited")

// exited is a wait's error for a process that has died.
func exited(addr string) error {
	return fmt.Errorf("%w before listening on %s", ErrExited, addr)
}
