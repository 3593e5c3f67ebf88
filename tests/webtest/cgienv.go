package webtest

import (
	"os"

	"serverlab/tests/testkit"
	"serverlab/tests/webtest/cgiprog"
)

// withoutShellVars takes the variables a shell adds (cgiprog.ShellVars) out
// of the server's own environment for the rest of the check, so that a CGI
// program that reports one was started through a shell, not handed it by
// os.Environ(). Under the grader the subject is started without them; under
// go test the server is this process, which inherited PWD, SHLVL and _ from
// the student's shell and go test: without this, a server that passes
// append(os.Environ(), "QUERY_STRING=…") failed go test and passed make grade.
// The chapter's checks do not run in parallel, so changing this process's
// environment for one check touches no other.
func withoutShellVars(k *testkit.T) {
	if testkit.ServerPID() != os.Getpid() {
		return // the subject's environment is the grader's, which has none of them
	}
	for _, name := range cgiprog.ShellVars {
		old, ok := os.LookupEnv(name)
		if !ok {
			continue
		}
		if err := os.Unsetenv(name); err != nil {
			k.Fatalf("test setup: unsetting %s: %v", name, err)
		}
		k.Cleanup(func() { os.Setenv(name, old) })
	}
}
