package jobserver

import (
	"bufio"
	"errors"
	"io"
	"math"
	"strconv"

	"serverlab/tools/given/jobs"
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
// request, or one of the protocol errors above. It reads a line as the
// original does (`in >> cmd`, then the rest of the line):
//
//   - white space before the command (space, \t, \v, \f, \r) is skipped,
//     and the command ends at the next white space; it is case-sensitive,
//     and anything else, an empty line included, is ErrUnsupported;
//   - the argument is the rest of the line, less one separating space (a
//     tab after the command stays in the argument); none, or an empty one,
//     is ErrMissingArgument;
//   - a number is plain decimal digits between 1 and the command's limit:
//     a run of digits too large for a uint64 is ErrOutOfRange (as the
//     original's std::from_chars says, even with junk after it), anything
//     else that is not all digits ErrInvalidInteger, and a value outside the
//     limits ErrOutOfRange;
//   - HASH takes the rest of the line as it is, white space included.
//
// Parse does not keep line: a HASH text is copied.
func Parse(line []byte) (Request, error) {
	// TODO(ex 3.1): Done when: a line is split as the original's stream
	// extraction splits it (leading C white space skipped, the command up to
	// the next white space, the argument the rest less one separating space),
	// each command gets the Err value above for each way it can be wrong, a
	// number is the leading run of digits with the limits of its command (a run
	// too large for a uint64 is out of range whatever follows it; no digit, or
	// anything after the digits, is an invalid integer), a HASH text is the
	// rest of the line as it is, copied because line is not kept, and parsing a
	// valid line allocates nothing else. Checked by TestEx3_1_Parse.
	return Request{}, notImplemented("3.1", "Parse")
}

// readBufferSize holds the longest request line and its '\n': a line is at
// most jobs.MaxLine bytes before its '\n', a '\r' there included (the
// original's rule).
const readBufferSize = jobs.MaxLine + 1

// LineReader frames request lines. Its buffer is fixed (jobs.MaxLine + 1
// bytes), so a client cannot make the server hold more than that per
// connection, however long its lines.
type LineReader struct {
	r   *bufio.Reader
	err error // sticky: after ErrTooLarge the stream cannot be resynchronised
}

// NewLineReader returns a LineReader reading from r.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, readBufferSize)}
}

// Next returns the next line without its "\n" and without a "\r" before it.
// The slice is valid only until the next call.
//
// A line may hold at most jobs.MaxLine bytes before its '\n'. As soon as
// more have arrived without one, Next returns ErrTooLarge, without reading
// the rest (a client cannot make the server read a gigabyte to skip it), and
// so does every later call: the server answers "request too large" and
// closes the connection. At the end of the stream Next returns io.EOF (an
// unterminated last line is dropped) or the read error.
func (lr *LineReader) Next() ([]byte, error) {
	// TODO(ex 3.1): Done when: each call returns the next line without its
	// newline and without one carriage return before it, aliasing the reader's
	// buffer (no copy); more than jobs.MaxLine bytes without a newline is
	// ErrTooLarge at once, without reading the rest, and from then on every
	// call; the end of the stream, or a read error, ends it. Checked by
	// TestEx3_1_Parse.
	return nil, notImplemented("3.1", "LineReader.Next")
}
