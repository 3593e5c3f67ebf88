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
	name, arg := splitCommand(line)
	cmd := lookup(name)
	if cmd == 0 {
		return Request{}, ErrUnsupported
	}
	if len(arg) == 0 {
		return Request{}, ErrMissingArgument
	}
	if cmd == Hash {
		return Request{Cmd: Hash, Text: string(arg)}, nil
	}
	n, err := parseUint(arg)
	if err != nil {
		return Request{}, err
	}
	if n < 1 || n > maxArg(cmd) {
		return Request{}, ErrOutOfRange
	}
	return Request{Cmd: cmd, N: n}, nil
}

// isSpace is C's isspace in the "C" locale, what `in >> cmd` skips.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// splitCommand splits a line into the command and its argument as the
// original's `in >> cmd; getline(in, rest)` does, then drops one space from
// the front of the argument.
func splitCommand(line []byte) (name, arg []byte) {
	start := 0
	for start < len(line) && isSpace(line[start]) {
		start++
	}
	end := start
	for end < len(line) && !isSpace(line[end]) {
		end++
	}
	arg = line[end:]
	if len(arg) > 0 && arg[0] == ' ' {
		arg = arg[1:]
	}
	return line[start:end], arg
}

// lookup returns the command spelled name, or 0. (A switch on string(name)
// does not allocate.)
func lookup(name []byte) Command {
	switch string(name) {
	case "PRIME":
		return Prime
	case "SORT":
		return Sort
	case "MATMUL":
		return MatMul
	case "HASH":
		return Hash
	}
	return 0
}

// parseUint parses plain decimal digits as the original's std::from_chars
// and its "all consumed" check do: the leading run of digits is the number
// (ErrOutOfRange if it does not fit in a uint64, whatever follows), and no
// digit at all or anything after them is ErrInvalidInteger.
func parseUint(s []byte) (uint64, error) {
	var n uint64
	i := 0
	for ; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		d := uint64(s[i] - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, ErrOutOfRange
		}
		n = n*10 + d
	}
	if i == 0 || i < len(s) {
		return 0, ErrInvalidInteger
	}
	return n, nil
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
	if lr.err != nil {
		return nil, lr.err
	}
	line, err := lr.r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		lr.err = ErrTooLarge
		return nil, ErrTooLarge
	case err != nil:
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}
