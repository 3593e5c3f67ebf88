package jobserver

import (
	"bufio"
	"errors"
	"io"
	"math"
	"strconv"

	"serverlab/tools/jobs"
	"serverlab/tools/lab"
)

// Command is what a request asks for.
type Command uint8

// The commands of the protocol. The zero Command is no command.
const (
	Prime Command = iota + 1
	Sort
	MatMul
	Hash
)

var commandNames = [...]string{Prime: "PRIME", Sort: "SORT", MatMul: "MATMUL", Hash: "HASH"}

// String returns the command as it is spelled on the wire.
func (c Command) String() string {
	if c == 0 || int(c) >= len(commandNames) {
		return "Command(" + strconv.Itoa(int(c)) + ")"
	}
	return commandNames[c]
}

// Request is one validated request line.
type Request struct {
	Cmd  Command
	N    uint64 // the argument of PRIME, SORT and MATMUL
	Text string // the argument of HASH
}

// The protocol's error answers. Their texts are the exact messages of
// "ERROR <id> <message>" (docs/protocols.md §2).
var (
	ErrInvalidInteger  = errors.New("invalid integer")
	ErrOutOfRange      = errors.New("argument out of range")
	ErrMissingArgument = errors.New("missing argument")
	ErrUnsupported     = errors.New("unsupported command")
	ErrTooLarge        = errors.New("request too large")
	ErrShuttingDown    = errors.New("server shutting down")
)

// maxArg is the largest argument a numeric command accepts; the smallest is 1.
func maxArg(c Command) uint64 {
	switch c {
	case Sort:
		return jobs.MaxSort
	case MatMul:
		return jobs.MaxMatMul
	default:
		return math.MaxUint64
	}
}

// Parse validates one request line (without its line ending) and returns the
// request, or one of the protocol errors above:
//
//   - the command is the text before the first space and is case-sensitive;
//     anything else, an empty line included, is ErrUnsupported;
//   - the argument is everything after that one space; none, or an empty
//     one, is ErrMissingArgument;
//   - a number is plain decimal digits (no sign, no spaces: ErrInvalidInteger)
//     between 1 and the command's limit (ErrOutOfRange, also for numbers that
//     do not fit in a uint64);
//   - HASH takes the rest of the line as it is, spaces included.
//
// Parse does not keep line: a HASH text is copied.
func Parse(line []byte) (Request, error) {
	// TODO(ex 3.1): cut line at the first space (bytes.Cut); look the command
	// up (a switch on string(name) does not allocate); check the argument is
	// there; for HASH, return the rest of the line as Text (string(arg)
	// copies it); otherwise parse the number with strconv.ParseUint(s, 10, 64),
	// which accepts digits only: its strconv.ErrSyntax is ErrInvalidInteger,
	// its strconv.ErrRange ErrOutOfRange (errors.Is sees through *NumError);
	// then check 1 ≤ n ≤ maxArg(cmd). Return the Err values above.
	// Checked by TestEx3_1_Parse.
	return Request{}, lab.NotImplemented("3.1", "Parse")
}

// readBufferSize holds the longest request line with its "\r\n".
const readBufferSize = jobs.MaxLine + 2

// LineReader frames request lines. Its buffer is fixed (a little over
// jobs.MaxLine), so a client cannot make the server hold more than that per
// connection, however long its lines.
type LineReader struct {
	r *bufio.Reader
}

// NewLineReader returns a LineReader reading from r.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, readBufferSize)}
}

// Next returns the next line without its "\n" and without a "\r" before it.
// The slice is valid only until the next call. A line longer than
// jobs.MaxLine bytes is read to its end and discarded, and Next returns
// ErrTooLarge: the next call reads the line after it. At the end of the
// stream Next returns io.EOF (an unterminated last line is dropped) or the
// read error.
func (lr *LineReader) Next() ([]byte, error) {
	// TODO(ex 3.1): read up to '\n' with lr.r.ReadSlice (no copy, no
	// allocation). If it fails with bufio.ErrBufferFull the line is longer
	// than the buffer: keep calling ReadSlice until the '\n' and return
	// ErrTooLarge. Otherwise strip the '\n' and one '\r' before it, and
	// return ErrTooLarge if more than jobs.MaxLine bytes are left. Any other
	// error (io.EOF) ends the stream. Checked by TestEx3_1_Parse.
	return nil, lab.NotImplemented("3.1", "LineReader.Next")
}
