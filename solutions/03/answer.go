package jobserver

import (
	"strconv"

	"serverlab/tools/given/jobs"
)

// Execute appends the result of req (the text after "OK <id> ") to dst. s is
// the calling worker's own scratch space: SORT and MATMUL reuse its buffers,
// so a worker in its steady state allocates nothing.
//
// A PRIME whose trial division would take more than jobs.MaxPrimeDivisions
// divisions fails with ErrOutOfRange once that budget is spent (a few
// milliseconds), instead of holding a worker for seconds; dst is then
// returned unchanged. Every other request succeeds.
func Execute(req Request, s *jobs.Scratch, dst []byte) ([]byte, error) {
	switch req.Cmd {
	case Prime:
		isPrime, decided := jobs.PrimeWithin(req.N, jobs.MaxPrimeDivisions)
		if !decided {
			return dst, ErrOutOfRange
		}
		return jobs.AppendPrimeResult(dst, isPrime), nil
	case Sort:
		n := int(req.N)
		return jobs.AppendSortResult(dst, n, s.Sort(n)), nil
	case MatMul:
		n := int(req.N)
		return jobs.AppendMatMulResult(dst, n, s.MatMul(n)), nil
	case Hash:
		return jobs.AppendHashResult(dst, jobs.Hash(req.Text)), nil
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
