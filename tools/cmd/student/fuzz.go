package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// fuzzConfig is what make fuzz asks for.
type fuzzConfig struct {
	Time time.Duration // how long each target runs
	Out  io.Writer
}

// fuzz runs every fuzz target of the course (tools/, tests/, chapters/, and
// solutions/ where the tree has it) for cfg.Time each, and stops at the
// first that fails.
//
// One failure is not always a finding: Go 1.26's fuzzing coordinator can end
// a target with a bare "context deadline exceeded" when -fuzztime runs out
// (golang/go#75804, fixed in Go 1.27). A target that fails so, without
// writing a failing input, runs once more; anything else, or a second
// failure, is the run's failure.
func (c *course) fuzz(ctx context.Context, cfg fuzzConfig) error {
	pkgs, tags, err := c.fuzzPackages(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, pkg := range pkgs {
		targets, err := c.fuzzTargets(ctx, pkg, tags)
		if err != nil {
			return err
		}
		for _, target := range targets {
			n++
			fmt.Fprintf(cfg.Out, "== %s %s\n", pkg, target)
			out, err := c.fuzzOnce(ctx, pkg, target, tags, cfg)
			if err == nil {
				continue
			}
			if !fuzztimeRace(out) {
				return fmt.Errorf("fuzz target %s of %s failed: %w", target, pkg, err)
			}
			fmt.Fprintf(cfg.Out, "fuzz: %s ended with Go's fuzztime race (golang/go#75804), no failing input: once more\n", target)
			if _, err := c.fuzzOnce(ctx, pkg, target, tags, cfg); err != nil {
				return fmt.Errorf("fuzz target %s of %s failed twice: %w", target, pkg, err)
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("found no fuzz target")
	}
	fmt.Fprintf(cfg.Out, "fuzz: %d targets, %s each\n", n, cfg.Time)
	return nil
}

// fuzzPackages lists the course's packages; go list fails loudly (a package
// that does not build is an error, not an empty list).
func (c *course) fuzzPackages(ctx context.Context) (pkgs []string, tags []string, err error) {
	patterns := []string{"./tools/...", "./tests/...", "./chapters/..."}
	if fi, err := os.Stat(filepath.Join(c.root, "solutions")); err == nil && fi.IsDir() {
		patterns = append(patterns, "./solutions/...")
		tags = []string{"-tags", "solutions"}
	}
	out, err := c.goOutput(ctx, append(append([]string{"list"}, tags...), patterns...)...)
	if err != nil {
		return nil, nil, fmt.Errorf("go list failed, so nothing was fuzzed: %w", err)
	}
	return strings.Fields(string(out)), tags, nil
}

// fuzzTargets are the Fuzz functions of one package.
func (c *course) fuzzTargets(ctx context.Context, pkg string, tags []string) ([]string, error) {
	out, err := c.goOutput(ctx, append(append([]string{"test"}, tags...), "-list", "^Fuzz", pkg)...)
	if err != nil {
		return nil, fmt.Errorf("cannot list the fuzz targets of %s: %w", pkg, err)
	}
	var targets []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "Fuzz") {
			targets = append(targets, strings.TrimSpace(line))
		}
	}
	return targets, nil
}

// fuzzOnce runs one target, its output both shown and kept.
func (c *course) fuzzOnce(ctx context.Context, pkg, target string, tags []string, cfg fuzzConfig) ([]byte, error) {
	args := append(append([]string{"test"}, tags...), "-run", "^$", "-fuzz", "^"+target+"$", "-fuzztime", cfg.Time.String(), pkg)
	var kept bytes.Buffer
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = c.root
	cmd.Stdout = io.MultiWriter(cfg.Out, &kept)
	cmd.Stderr = cmd.Stdout
	err := cmd.Run()
	return kept.Bytes(), err
}

// fuzztimeRace says whether a failed run is Go's coordinator race: no
// failing input written, and the bare deadline error among its last lines.
func fuzztimeRace(out []byte) bool {
	if bytes.Contains(out, []byte("Failing input written")) {
		return false
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	for _, l := range lines[max(0, len(lines)-5):] {
		if l == "    context deadline exceeded" {
			return true
		}
	}
	return false
}

// goOutput runs the go command in the course's folder and returns its
// standard output; its standard error becomes the error's text.
func (c *course) goOutput(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = c.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
