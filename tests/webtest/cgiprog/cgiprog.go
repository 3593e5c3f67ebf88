// Package cgiprog holds the CGI programs of chapter 06: spin.cgi from the
// original project and a few the suite uses to probe a server's CGI support.
// One binary plays all of them; its file name picks the part:
//
//	spin…cgi    spin.cgi?N sleeps N seconds (a decimal), then answers a small
//	            HTML page, as the original spin.c does
//	env…cgi     answers text with its QUERY_STRING, argument count, parent
//	            process id, and the variables a shell would have added
//	slow…cgi    sends its header and process id at once, then sleeps for
//	            QUERY_STRING seconds (default: an hour)
//	flood…cgi   sends its process id, then QUERY_STRING MiB of bytes (default 64)
//	fail…cgi    writes to stderr and exits with status 1, having sent nothing
//	noisy…cgi   writes NoisyStderr to stderr, then answers NoisyBody: a program
//	            that logs as it works
//	mute…cgi    sends nothing and sleeps for QUERY_STRING seconds (default: an
//	            hour): a program that hangs before its header
//	orphan…cgi  starts a background child that keeps its stdout open and
//	            sleeps (QUERY_STRING seconds, default an hour), sends its
//	            header and the child's process id, and exits at once
//
// The name comes from argv[0]. A server may start the program with an empty
// argument list (the OSTEP server does: execve(path, {NULL}, environ); Linux
// then passes a single empty argv[0]); the name is then the executable's own
// (/proc/self/exe keeps the name it was started under, a hard link's too).
// The spin command falls back to spin when neither names a program.
//
// Build spin.cgi for the experiments with
//
//	go build -o www/spin.cgi ./tests/webtest/cgiprog/spin
//
// and copy it under the other names (www/env.cgi …) to get the others. The
// suite needs no build: its test binary plays the programs itself, from a hard
// link named *.cgi (see Install and Invoked).
package cgiprog

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// roles are the programs, by the word their file name must contain.
var roles = []string{"spin", "env", "slow", "flood", "fail", "mute", "orphan", "linger", "noisy"}

// Invoked reports whether this process was started as a CGI program, that is
// from a file whose name ends in ".cgi".
func Invoked() bool { return strings.HasSuffix(progName(), ".cgi") }

// progName is the name the program was started under: argv[0], or the
// executable's name when argv[0] is empty.
func progName() string {
	if len(os.Args) > 0 && os.Args[0] != "" {
		return filepath.Base(os.Args[0])
	}
	if exe, err := os.Executable(); err == nil {
		return filepath.Base(exe)
	}
	return ""
}

// role is the program a name asks for, or "".
func role(name string) string {
	for _, r := range roles {
		if strings.Contains(name, r) {
			return r
		}
	}
	return ""
}

// Main runs the program the file name asks for and returns its exit status.
func Main() int { return MainOr("") }

// MainOr is Main, running the program def when the name asks for none.
func MainOr(def string) int {
	name := progName()
	r := role(name)
	if r == "" {
		r = def
	}
	query := os.Getenv("QUERY_STRING")
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var err error
	switch r {
	case "spin":
		err = spin(out, query)
	case "env":
		err = env(out, query)
	case "slow":
		err = slow(out, query)
	case "flood":
		err = flood(out, query)
	case "fail":
		fmt.Fprintln(os.Stderr, name+": failing on purpose")
		return 1
	case "noisy":
		fmt.Fprint(os.Stderr, NoisyStderr)
		_, err = fmt.Fprintf(out, "Content-Length: %d\r\nContent-Type: text/plain\r\n\r\n%s", len(NoisyBody), NoisyBody)
	case "mute", "linger":
		err = mute(query)
	case "orphan":
		err = orphan(out, query)
	default:
		err = fmt.Errorf("no CGI program is called %q", name)
		// A whole response, so that a client (wrk, curl) is not left with a
		// header the server started and nobody ended.
		msg := err.Error() + "\n"
		fmt.Fprintf(out, "Status: 500\r\nContent-Length: %d\r\nContent-Type: text/plain\r\n\r\n%s", len(msg), msg)
	}
	if err == nil {
		err = out.Flush()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, name+":", err)
		return 1
	}
	return 0
}

// NoisyStderr and NoisyBody are what noisy.cgi writes to its stderr and its
// stdout.
const (
	NoisyStderr = "noisy.cgi: a line for the server's log, not for the client\n"
	NoisyBody   = "the answer\n"
)

// seconds reads a query such as "1" or "0.25" as a duration; def if empty.
func seconds(query string, def time.Duration) (time.Duration, error) {
	if query == "" {
		return def, nil
	}
	f, err := strconv.ParseFloat(query, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("query %q is not a number of seconds", query)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// spin is the original spin.cgi: waste N seconds, then say so.
func spin(w io.Writer, query string) error {
	d, err := seconds(query, time.Second)
	if err != nil {
		return err
	}
	start := time.Now()
	time.Sleep(d)
	body := fmt.Sprintf("<p>Welcome to the CGI program (%s)</p>\r\n"+
		"<p>My only purpose is to waste time on the server!</p>\r\n"+
		"<p>I spun for %.2f seconds</p>\r\n", query, time.Since(start).Seconds())
	_, err = fmt.Fprintf(w, "Content-Length: %d\r\nContent-Type: text/html\r\n\r\n%s", len(body), body)
	return err
}

// ShellVars are the variables a shell adds to the environment it was given
// (dash sets PWD; bash PWD, SHLVL and _). The check takes them out of the
// server's own environment first (webtest's withoutShellVars), so that one
// the program sees was added on the way.
var ShellVars = []string{"PWD", "SHLVL", "_"}

// env describes how the program was run. SHELL_VARS lists the ShellVars it
// has: a server that ran the program through "sh -c" shows itself there, even
// when the shell replaced itself with the program (so that the parent is the
// server).
func env(w io.Writer, query string) error {
	var added []string
	for _, v := range ShellVars {
		if _, ok := os.LookupEnv(v); ok {
			added = append(added, v)
		}
	}
	body := fmt.Sprintf("QUERY_STRING=%s\nARGS=%d\nSHELL_VARS=%s\nPPID=%d\n",
		query, len(os.Args), strings.Join(added, ","), parentPID())
	_, err := fmt.Fprintf(w, "Content-Length: %d\r\nContent-Type: text/plain\r\n\r\n%s", len(body), body)
	return err
}

// mute sends nothing and takes its time.
func mute(query string) error {
	d, err := seconds(query, time.Hour)
	if err != nil {
		return err
	}
	time.Sleep(d)
	return nil
}

// orphan leaves a child behind that holds its stdout, and exits.
func orphan(w *bufio.Writer, query string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	child := exec.Command(self)
	child.Args = []string{"linger.cgi"} // plays mute
	child.Env = []string{"QUERY_STRING=" + query}
	child.Stdout = os.Stdout // the same pipe, inherited: the server sees no end of file while it lives
	if err := child.Start(); err != nil {
		return err
	}
	fmt.Fprintf(w, "Content-Type: text/plain\r\n\r\nPID=%d\n", childPID(child.Process.Pid))
	return w.Flush()
}

// slow sends its pid at once and then takes its time.
func slow(w *bufio.Writer, query string) error {
	d, err := seconds(query, time.Hour)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Content-Type: text/plain\r\n\r\nPID=%d\n", selfPID())
	if err := w.Flush(); err != nil {
		return err
	}
	time.Sleep(d)
	_, err = io.WriteString(w, "done\n")
	return err
}

// flood sends its pid, then many bytes, for as long as someone reads them.
func flood(w *bufio.Writer, query string) error {
	mib := 64
	if query != "" {
		n, err := strconv.Atoi(query)
		if err != nil {
			return err
		}
		mib = n
	}
	fmt.Fprintf(w, "Content-Type: text/plain\r\n\r\nPID=%d\n", selfPID())
	chunk := []byte(strings.Repeat("flood\n", 1024))
	for sent := 0; sent < mib<<20; sent += len(chunk) {
		if _, err := w.Write(chunk); err != nil {
			return err
		}
	}
	return nil
}

// Install makes a program called name in dir: a hard link to (or, across file
// systems, a copy of) the running executable, which must call Main when
// Invoked. Never chmod what Install made: a hard link shares its mode with the
// executable itself.
func Install(dir, name string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	dst := filepath.Join(dir, name)
	if err := os.Link(self, dst); err == nil {
		return dst, nil
	}
	return dst, copyFile(self, dst)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// parentPID is the parent's process id as /proc numbers it: where the server
// runs in a PID namespace of its own (tools/cmd/grade's sandbox), Getppid's
// number is the namespace's, not the one the suite knows the server by.
func parentPID() int {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return os.Getppid()
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return os.Getppid()
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return os.Getppid()
	}
	return ppid
}

// selfPID is this process's id as /proc numbers it (see parentPID).
func selfPID() int {
	if l, err := os.Readlink("/proc/self"); err == nil {
		if pid, err := strconv.Atoi(l); err == nil {
			return pid
		}
	}
	return os.Getpid()
}

// childPID is the id of this process's child nsPID as /proc numbers it: the
// /proc entry whose parent is this process and whose innermost NSpid is
// nsPID.
func childPID(nsPID int) int {
	self := selfPID()
	if self == os.Getpid() {
		return nsPID // no namespace of its own
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		var ppid, inner int
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "PPid:"); ok {
				ppid, _ = strconv.Atoi(strings.TrimSpace(v))
			}
			if v, ok := strings.CutPrefix(line, "NSpid:"); ok {
				f := strings.Fields(v)
				inner, _ = strconv.Atoi(f[len(f)-1])
			}
		}
		if ppid == self && inner == nsPID {
			pid, _ := strconv.Atoi(e.Name())
			return pid
		}
	}
	return nsPID
}
