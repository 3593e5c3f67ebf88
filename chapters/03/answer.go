package jobserver

import (
	"strconv"

	"serverlab/tools/jobs"
)

// Execute appends the result of req (the text after "OK <id> ") to dst. s is
// the calling worker's own scratch space: SORT and MATMUL reuse its buffers,
// so a worker in its steady state allocates nothing.
func Execute(req Request, s *jobs.Scratch, dst []byte) []byte {
	switch req.Cmd {
	case Prime:
		return jobs.AppendPrimeResult(dst, jobs.Prime(req.N))
	case Sort:
		n := int(req.N)
		return jobs.AppendSortResult(dst, n, s.Sort(n))
	case MatMul:
		n := int(req.N)
		return jobs.AppendMatMulResult(dst, n, s.MatMul(n))
	case Hash:
		return jobs.AppendHashResult(dst, jobs.Hash(req.Text))
	}
	panic("jobserver: Execute of an unparsed request") // Parse never returns one
}

// AppendOK appends "OK <id> " to dst: the start of a success answer, to which
// Execute appends the result.
func AppendOK(dst []byte, id uint64) []byte {
	dst = append(dst, "OK "...)
	dst = strconv.AppendUint(dst, id, 10)
	return append(dst, ' ')
}

// AppendError appends the whole answer "ERROR <id> <message>\n" to dst.
func AppendError(dst []byte, id uint64, err error) []byte {
	dst = append(dst, "ERROR "...)
	dst = strconv.AppendUint(dst, id, 10)
	dst = append(dst, ' ')
	dst = append(dst, err.Error()...)
	return append(dst, '\n')
}
