package jobserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"

	"serverlab/tools/jobs"
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
	name, arg, _ := bytes.Cut(line, []byte(" "))
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

// parseUint parses plain decimal digits. Any other byte is ErrInvalidInteger,
// even after an overflow; a value over math.MaxUint64 is ErrOutOfRange.
func parseUint(digits []byte) (uint64, error) {
	var n uint64
	overflow := false
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, ErrInvalidInteger
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			overflow = true
		}
		n = n*10 + d
	}
	if overflow {
		return 0, ErrOutOfRange
	}
	return n, nil
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
	line, err := lr.r.ReadSlice('\n')
	switch {
	case errors.Is(err, bufio.ErrBufferFull):
		return nil, lr.skipLine()
	case err != nil:
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) > jobs.MaxLine {
		return nil, ErrTooLarge
	}
	return line, nil
}

// skipLine discards the rest of a line that did not fit in the buffer and
// returns ErrTooLarge, or the read error that ended the stream first.
func (lr *LineReader) skipLine() error {
	for {
		_, err := lr.r.ReadSlice('\n')
		switch {
		case err == nil:
			return ErrTooLarge
		case !errors.Is(err, bufio.ErrBufferFull):
			return err
		}
	}
}
