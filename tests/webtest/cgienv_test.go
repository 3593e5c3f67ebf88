package webtest

import (
	"os"
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tests/webtest/cgiprog"
)

// TestWithoutShellVars: under go test (the server is this process) the
// variables a shell adds are gone for the check, as they are from the
// grader's subject, and back afterwards.
func TestWithoutShellVars(t *testing.T) {
	for _, name := range cgiprog.ShellVars {
		t.Setenv(name, "inherited-"+name)
	}
	t.Run("check", func(t *testing.T) {
		withoutShellVars(testkit.New(t, "6.4"))
		for _, name := range cgiprog.ShellVars {
			if v, ok := os.LookupEnv(name); ok {
				t.Errorf("during the check %s=%q; want it unset, as the grader's subject has it", name, v)
			}
		}
	})
	for _, name := range cgiprog.ShellVars {
		if v := os.Getenv(name); v != "inherited-"+name {
			t.Errorf("after the check %s=%q; want %q back", name, v, "inherited-"+name)
		}
	}
}
