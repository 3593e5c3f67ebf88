//go:build !solutions

package main

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"serverlab/tools/given/jobs"
)

// Without the "solutions" build tag (always, in the student release) the
// reference servers are not compiled in: the end-to-end tests that need one
// skip, and every test against fake servers still runs. See solutions_test.go.

func needSolutions(t *testing.T) {
	t.Helper()
	t.Skip("needs the reference solutions: run go test -tags solutions in the maintainers' tree (make unit does)")
}

func startChat(t *testing.T, _ string) string { needSolutions(t); return "" }

func startEvloopChat(t *testing.T, _ string) string { needSolutions(t); return "" }

func startJobServer(t *testing.T) string { needSolutions(t); return "" }

func startDiscovery(t *testing.T, _ time.Duration) (addr, usersPath string) {
	needSolutions(t)
	return "", ""
}

func startStock(t *testing.T) (addr, path string) { needSolutions(t); return "", "" }

// correct answers a request as the protocol says, with id n, for the requests
// the load generator sends (the reference parser is in solutions/03; this is
// enough for the fake job servers of jobs_test.go).
func correct(line string, n int) string {
	cmd, arg, _ := strings.Cut(line, " ")
	v, err := strconv.ParseUint(arg, 10, 64)
	if err != nil && cmd != "HASH" {
		return fmt.Sprintf("ERROR %d invalid integer", n)
	}
	var result string
	switch cmd {
	case "PRIME":
		result = jobs.PrimeResult(jobs.Prime(v))
	case "SORT":
		result = jobs.SortResult(int(v), jobs.Sort(int(v)))
	case "MATMUL":
		result = jobs.MatMulResult(int(v), jobs.MatMul(int(v)))
	case "HASH":
		result = jobs.HashResult(jobs.Hash(arg))
	default:
		return fmt.Sprintf("ERROR %d unsupported command", n)
	}
	return fmt.Sprintf("OK %d %s", n, result)
}
