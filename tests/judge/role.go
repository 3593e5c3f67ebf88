//go:build unix

package judge

import (
	"fmt"
	"net"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"go.uber.org/goleak"

	"serverlab/tools/given/lab"
)

// role is this process's role, read once: the variable is removed from the
// environment, so that programs a server starts (CGI, say) have none.
var role = sync.OnceValue(func() string {
	r := os.Getenv(RoleEnv)
	os.Unsetenv(RoleEnv)
	return r
})

// IsJudge reports whether this process is the judge: its suites drive a
// subject in another process.
func IsJudge() bool { return role() == Judge }

// IsSubject reports whether this process is a subject: it serves Impl
// values to a judge instead of running tests.
func IsSubject() bool { return role() == Subject }

// judgeSide is the judge's end of the socket (a variable, so that this
// package's tests can set up both ends in one test).
var judgeSide = sync.OnceValues(func() (*peer, error) {
	protect()
	p, err := connect("j")
	if err == nil {
		go p.loop()
	}
	return p, err
})

// connect makes this end of the socket the grader handed over.
func connect(side string) (*peer, error) {
	f := os.NewFile(SocketFD, "judge-socket")
	if f == nil {
		return nil, fmt.Errorf("judge: no descriptor %d (run by tools/cmd/grade?)", SocketFD)
	}
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("judge: descriptor %d is not a socket: %w", SocketFD, err)
	}
	uc, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("judge: descriptor %d is a %T, not a Unix socket", SocketFD, c)
	}
	if side != "j" {
		return newPeer(newLink(uc), side), nil
	}
	if err := passCreds(uc); err != nil {
		uc.Close()
		return nil, fmt.Errorf("judge: asking for the writer's credentials on descriptor %d: %w", SocketFD, err)
	}
	return newPeer(newCheckedLink(uc, graderPID), side), nil
}

// Remote returns the suite's Impl of type T as the subject has it: its
// functions and objects call the subject's; its data is course's.
//
// course is the Impl as the judge's wiring states it. Every field that is
// plain data (a bool, number or string, or a struct, array, slice or map of
// them) comes from course, never from the subject, whose process could say
// anything (Threaded: false, to be spared a pool's checks). The subject's
// copy must agree with course: if it does not, either the course's two
// wirings disagree or the subject lies, and the judge stops at once, before
// any check, so that every exercise is lost. A judge that cannot reach its
// subject fails at once too: every check would.
func Remote[T any](course T) T {
	var v T
	p, err := judgeSide()
	if err == nil {
		t := reflect.TypeFor[T]()
		err = p.callTyped(0, implService(t), reflect.FuncOf(nil, []reflect.Type{t}, false), nil, []any{&v})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s the judge cannot get the %s of the student's code: %v\n",
			lab.SubjectGoneMarker, reflect.TypeFor[T](), err)
		os.Exit(3)
	}
	if field := takeData(reflect.ValueOf(&v).Elem(), reflect.ValueOf(course)); field != "" {
		fmt.Fprintf(os.Stderr, "judge: the student's process reports %s.%s unlike the course's wiring: "+
			"no check can be trusted, none is run\n", reflect.TypeFor[T](), field)
		os.Exit(3)
	}
	return v
}

// takeData copies the plain-data fields of struct course into v and returns
// the name of the first one v held differently ("" if none).
func takeData(v, course reflect.Value) (differs string) {
	if v.Kind() != reflect.Struct {
		return ""
	}
	for i := range v.NumField() {
		if !isData(v.Type().Field(i).Type) {
			continue
		}
		if !reflect.DeepEqual(v.Field(i).Interface(), course.Field(i).Interface()) && differs == "" {
			differs = v.Type().Field(i).Name
		}
		v.Field(i).Set(course.Field(i))
	}
	return differs
}

// isData reports whether values of t are plain data: nothing in them calls
// or refers to code.
func isData(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.String:
		return true
	case reflect.Array, reflect.Slice:
		return isData(t.Elem())
	case reflect.Map:
		return isData(t.Key()) && isData(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if !isData(t.Field(i).Type) {
				return false
			}
		}
		return true
	}
	return false
}

func implService(t reflect.Type) string { return "impl:" + t.PkgPath() + "." + t.Name() }

// Serve makes this process the subject: it serves impls (the chapter's
// Impl values) to the judge until the judge is done, and returns the exit
// code. The race detector (GORACE's halt_on_error, set by the grader) and
// a panic end the process on their own; the grader reads either from its
// exit status.
func Serve(impls ...any) int {
	if err := checkSocket(SocketFD); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	p, err := connect("s")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	for _, impl := range impls {
		v := reflect.ValueOf(impl)
		ft := reflect.FuncOf(nil, []reflect.Type{v.Type()}, false)
		p.services[implService(v.Type())] = reflect.MakeFunc(ft, func([]reflect.Value) []reflect.Value {
			return []reflect.Value{v}
		})
	}
	for name, fn := range subjectServices() {
		p.service(name, fn)
	}
	go p.loop()
	<-p.lost
	return 0
}

// subjectServices are what the subject does for the judge: its leak
// checks, stacks, memory statistics, descriptors. Under go test, with no
// judge, the same functions serve the suites in their own process (see
// callService), so that a suite calls one mechanism in both modes.
func subjectServices() map[string]any {
	s := &subject{snapshots: map[uint64]goleak.Option{}}
	return map[string]any{
		"snapshot": s.snapshot, "leaks": s.leaks, "stacks": stacks, "memstats": memstats, "gc": runtime.GC,
		"pid": os.Getpid, "exhaustFDs": exhaustFDs, "releaseFDs": releaseFDs,
		"idle": func() bool { return idle(stacksHere()) }, "finish": s.finish,
	}
}

// subject is the subject's state of the judge's leak checks.
type subject struct {
	mu        sync.Mutex
	next      uint64
	snapshots map[uint64]goleak.Option
}

// ignoreJudge leaves this package's own goroutines (reading the socket,
// watching contexts) out of every leak report.
var ignoreJudge = []goleak.Option{
	goleak.IgnoreAnyFunction("serverlab/tests/judge.(*peer).loop"),
	goleak.IgnoreAnyFunction("serverlab/tests/judge.Serve"),
	goleak.IgnoreAnyFunction("serverlab/tests/judge.(*peer).watchContext.func1"),
}

// LeakOptions are the goleak options that leave this package's goroutines
// out of a report.
func LeakOptions() []goleak.Option { return ignoreJudge }

func (s *subject) snapshot() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.snapshots[s.next] = goleak.IgnoreCurrent()
	return s.next
}

// leaks is goleak's report of the goroutines started since the snapshot id
// that are still running, or "".
func (s *subject) leaks(id uint64) string {
	s.mu.Lock()
	snap, ok := s.snapshots[id]
	s.mu.Unlock()
	opts := ignoreJudge
	if ok {
		opts = append([]goleak.Option{snap}, ignoreJudge...)
	}
	if err := goleak.Find(opts...); err != nil {
		return withoutSuiteGoroutines(err.Error())
	}
	return ""
}

// finish is the last call: goleak's report of every goroutine still
// running, as goleak.VerifyTestMain makes it.
func (s *subject) finish() string {
	if err := goleak.Find(ignoreJudge...); err != nil {
		return err.Error()
	}
	return ""
}

// stacks is every goroutine's stack, as runtime.Stack prints them.
func stacks() string { return dropJudgeGoroutines(stacksHere()) }

// dropJudgeGoroutines leaves out the goroutines that only serve the socket.
func dropJudgeGoroutines(dump string) string {
	var keep []string
	for _, block := range strings.Split(dump, "\n\n") {
		// A frame of the loop, not a "created by" line: the goroutines the
		// loop starts run the calls, Serve's among them.
		if strings.Contains(block, "serverlab/tests/judge.(*peer).loop(") ||
			strings.Contains(block, "serverlab/tests/judge.stacks(") {
			continue
		}
		keep = append(keep, block)
	}
	return strings.Join(keep, "\n\n")
}

func memstats() runtime.MemStats {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m
}

// The judge's side of the subject's services.

// Snapshot marks the goroutines the subject runs now, for Leaks.
func Snapshot() uint64 {
	var id uint64
	callService("snapshot", reflect.TypeFor[func() uint64](), nil, &id)
	return id
}

// Leaks is the subject's leak report since the snapshot id ("" if none). A
// subject that does not answer has leaked, as far as the judge can tell.
func Leaks(id uint64) string {
	var report string
	if err := callService("leaks", reflect.TypeFor[func(uint64) string](), []any{id}, &report); err != nil {
		return "the student's process did not answer the leak check: " + err.Error()
	}
	return boundReport(report)
}

// Stacks is the subject's goroutine dump, for a message.
func Stacks() string {
	var dump string
	callService("stacks", reflect.TypeFor[func() string](), nil, &dump)
	return boundReport(dump)
}

// MemStats is the subject's runtime.MemStats.
func MemStats() runtime.MemStats {
	var m runtime.MemStats
	callService("memstats", reflect.TypeFor[func() runtime.MemStats](), nil, &m)
	return m
}

// GC runs a garbage collection in the subject.
func GC() { callService("gc", reflect.TypeFor[func()](), nil) }

// Finish is the judge's last call: the subject's report of the goroutines
// still running ("" if none).
func Finish() string {
	var report string
	if err := callService("finish", reflect.TypeFor[func() string](), nil, &report); err != nil {
		return "the student's process did not answer the final leak check: " + err.Error()
	}
	return boundReport(report)
}

// Lost reports whether the subject has gone (never, under go test: there
// is none).
func Lost() bool {
	if !IsJudge() {
		return false
	}
	p, err := judgeSide()
	if err != nil {
		return true
	}
	select {
	case <-p.lost:
		return true
	default:
		return false
	}
}

// callService calls the subject's service name; in a process that is not
// the judge (go test), this process's own.
func callService(name string, ft reflect.Type, args []any, results ...any) error {
	if !IsJudge() {
		callLocal(name, args, results)
		return nil
	}
	p, err := judgeSide()
	if err != nil {
		return err
	}
	return p.callTyped(0, name, ft, args, results)
}

// localServices are subjectServices for a process that is its own subject.
var localServices = sync.OnceValue(subjectServices)

func callLocal(name string, args []any, results []any) {
	fn := reflect.ValueOf(localServices()[name])
	in := make([]reflect.Value, len(args))
	for i, a := range args {
		in[i] = reflect.ValueOf(a)
	}
	for i, r := range fn.Call(in) {
		if i < len(results) {
			reflect.ValueOf(results[i]).Elem().Set(r)
		}
	}
}
