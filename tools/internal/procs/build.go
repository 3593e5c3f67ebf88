package procs

import (
	"context"
	"io"
	"os"
	"os/exec"
)

// Build compiles the Go package pkg into the program bin (go build -o), with
// the go command run in dir ("" = this process's folder) and its output
// written to out. Build servers before measuring them: a trial must never
// time the compiler.
func Build(ctx context.Context, dir, pkg, bin string, out io.Writer) error {
	cmd := exec.CommandContext(ctx, goCommand(), "build", "-o", bin, pkg)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = out, out
	return cmd.Run()
}

// goCommand is the go command: $GO as the Makefile sets it, or go.
func goCommand() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}
