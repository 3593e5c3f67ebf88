package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"serverlab/tools/given/jobs"
	"serverlab/tools/internal/load"
)

// The jobs mode is ThreadForge's load_test for the chapter 03 job server
// (docs/protocols.md §2): each client keeps one request outstanding, checks that
// the answer carries a job id (greater than the one before: ids come from one
// server-wide counter) and the right result, byte for byte. The original's
// flags are accepted too (--requests-per-client, --host, --port).
func init() {
	register(mode{
		name:    "jobs",
		summary: "chapter 03 job server: PRIME/SORT/MATMUL or the original's mixed cycle, one request outstanding per client",
		run:     runJobs,
	})
}

// Workloads of the original's load_test.
const (
	workloadPrime  = "prime"
	workloadSort   = "sort"
	workloadMatMul = "matmul"
	workloadMixed  = "mixed"
)

// mixedSlots is the original's mixed cycle of ten slots: 50% PRIME, 30% SORT,
// 20% MATMUL. Request r of client c takes slot (c*7 + r) mod 10, so clients
// start at different points of the cycle.
var mixedSlots = [10]string{
	workloadPrime, workloadPrime, workloadPrime, workloadPrime, workloadPrime,
	workloadSort, workloadSort, workloadSort,
	workloadMatMul, workloadMatMul,
}

// jobRequest is one request line and the result its answer must carry.
type jobRequest struct {
	line   []byte // with its '\n'
	result []byte // the text after "OK <id> "
}

func runJobs(ctx context.Context, env *env, args []string) error {
	fs := newFlagSet(env, "jobs")
	common := addCommonFlags(fs, "127.0.0.1:9000")
	workload := fs.String("workload", workloadPrime, "prime, sort, matmul or mixed")
	primeValue := fs.Uint64("prime-value", 32416190071, "the n of PRIME n")
	sortCount := fs.Int("sort-count", 10000, "the n of SORT n")
	matrixSize := fs.Int("matrix-size", 32, "the n of MATMUL n")
	perClient := fs.Int("requests-per-client", 0, "the original's name for -requests")
	host := fs.String("host", "", "the original's flag: server host (with -port, instead of -addr)")
	port := fs.Int("port", 0, "the original's flag: server port")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *perClient > 0 {
		common.requests = *perClient
	}
	if *host != "" || *port != 0 {
		h, p, _ := net.SplitHostPort(common.addr)
		if *host != "" {
			h = *host
		}
		if *port != 0 {
			p = strconv.Itoa(*port)
		}
		common.addr = net.JoinHostPort(h, p)
	}
	reqs, err := jobRequests(*primeValue, *sortCount, *matrixSize)
	if err != nil {
		return err
	}
	cycle, err := workloadCycle(*workload, reqs)
	if err != nil {
		return err
	}
	common.labels = append(common.labels, load.Label{Name: "workload", Value: *workload})
	newClient := func(ctx context.Context, id int) (load.Client, error) {
		conn, err := load.Dial(ctx, "tcp", common.addr, common.timeout)
		if err != nil {
			return nil, err
		}
		return &jobClient{id: id, conn: conn, r: bufio.NewReader(conn), timeout: common.timeout, cycle: cycle}, nil
	}
	return common.run(ctx, env, "jobs", newClient)
}

// jobRequests builds the three numeric requests and computes their expected
// results with the same code the servers use (serverlab/tools/given/jobs).
func jobRequests(prime uint64, sortN, matN int) (map[string]jobRequest, error) {
	switch {
	case prime < 1:
		return nil, fmt.Errorf("-prime-value %d: PRIME takes 1 ≤ n < 2^64", prime)
	case sortN < 1 || sortN > jobs.MaxSort:
		return nil, fmt.Errorf("-sort-count %d: SORT takes 1 ≤ n ≤ %d", sortN, jobs.MaxSort)
	case matN < 1 || matN > jobs.MaxMatMul:
		return nil, fmt.Errorf("-matrix-size %d: MATMUL takes 1 ≤ n ≤ %d", matN, jobs.MaxMatMul)
	}
	return map[string]jobRequest{
		workloadPrime: {
			line:   fmt.Appendf(nil, "PRIME %d\n", prime),
			result: jobs.AppendPrimeResult(nil, jobs.Prime(prime)),
		},
		workloadSort: {
			line:   fmt.Appendf(nil, "SORT %d\n", sortN),
			result: jobs.AppendSortResult(nil, sortN, jobs.Sort(sortN)),
		},
		workloadMatMul: {
			line:   fmt.Appendf(nil, "MATMUL %d\n", matN),
			result: jobs.AppendMatMulResult(nil, matN, jobs.MatMul(matN)),
		},
	}, nil
}

// workloadCycle returns the requests a client cycles through: one for a
// single workload, the ten slots for mixed.
func workloadCycle(workload string, reqs map[string]jobRequest) ([]jobRequest, error) {
	if workload == workloadMixed {
		cycle := make([]jobRequest, len(mixedSlots))
		for i, w := range mixedSlots {
			cycle[i] = reqs[w]
		}
		return cycle, nil
	}
	r, ok := reqs[workload]
	if !ok {
		return nil, fmt.Errorf("-workload %q: want prime, sort, matmul or mixed", workload)
	}
	return []jobRequest{r}, nil
}

// jobClient is one connection with one request outstanding at a time.
type jobClient struct {
	id      int
	conn    net.Conn
	r       *bufio.Reader
	timeout time.Duration
	cycle   []jobRequest
	seq     int    // requests issued so far
	lastID  uint64 // the id of the previous answer
}

// Do sends the next request of the cycle and checks its answer.
func (c *jobClient) Do(ctx context.Context) error {
	req := c.cycle[(c.id*7+c.seq)%len(c.cycle)]
	c.seq++
	if err := c.conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	if _, err := c.conn.Write(req.line); err != nil {
		return err
	}
	answer, err := c.r.ReadSlice('\n')
	if err != nil {
		return err
	}
	id, err := c.check(answer, req)
	if err != nil {
		return err
	}
	c.lastID = id
	return nil
}

// check parses "OK <id> <result>\n" and compares it with what req expects.
func (c *jobClient) check(answer []byte, req jobRequest) (uint64, error) {
	rest, ok := bytes.CutPrefix(answer, []byte("OK "))
	num, result, found := bytes.Cut(rest, []byte(" "))
	if !ok || !found {
		return 0, fmt.Errorf("%w: sent %q, got %q", load.ErrBadReply, req.line, answer)
	}
	id, err := strconv.ParseUint(string(num), 10, 64)
	if err != nil || id <= c.lastID {
		return 0, load.WithKind("bad id", fmt.Errorf("sent %q, got %q: want an id above %d, the previous answer's",
			req.line, answer, c.lastID))
	}
	if !bytes.Equal(bytes.TrimSuffix(result, []byte("\n")), req.result) {
		return 0, fmt.Errorf("%w: sent %q, got %q, want result %q", load.ErrBadReply, req.line, answer, req.result)
	}
	return id, nil
}

func (c *jobClient) Close() error { return c.conn.Close() }
