package jobs

import (
	"math"
	"strings"
)

// Reference is the protocol's request rule written as plainly as possible:
// a line-by-line transcription of the original's parse_job_line (an
// istringstream, `in >> cmd`, then std::getline and std::from_chars). It is
// the oracle the suites and fuzz targets compare a server's parser with; a
// server should not call it (it allocates, and writing the parser is
// exercise 3.1).
//
// line is one request without its '\n' (and without the '\r' before it).
// It returns the command ("PRIME", "SORT", "MATMUL", "HASH"), the number or
// the HASH text, or the protocol's error message ("" when the line is valid).
func Reference(line string) (cmd string, n uint64, text string, msg string) {
	// in >> cmd: skip leading white space, then read up to the next one.
	rest := strings.TrimLeft(line, cWhiteSpace)
	end := strings.IndexAny(rest, cWhiteSpace)
	if end < 0 {
		end = len(rest)
	}
	cmd, rest = rest[:end], rest[end:]
	// std::getline(in, rest), less one separating space (only a space: a
	// tab after the command stays in the argument).
	rest = strings.TrimPrefix(rest, " ")
	var limit uint64
	switch cmd {
	case "PRIME":
		limit = math.MaxUint64
	case "SORT":
		limit = MaxSort
	case "MATMUL":
		limit = MaxMatMul
	case "HASH":
		if rest == "" {
			return "", 0, "", "missing argument"
		}
		return cmd, 0, rest, ""
	default:
		return "", 0, "", "unsupported command"
	}
	if rest == "" {
		return "", 0, "", "missing argument"
	}
	n, msg = fromChars(rest)
	switch {
	case msg != "":
		return "", 0, "", msg
	case n < 1 || n > limit:
		return "", 0, "", "argument out of range"
	}
	return cmd, n, "", ""
}

// cWhiteSpace is what C's isspace accepts in the "C" locale; '\n' cannot
// occur inside a line.
const cWhiteSpace = " \t\n\v\f\r"

// fromChars is std::from_chars for a uint64 followed by the original's
// "whole string consumed" check: the longest run of leading digits is the
// number; if that run overflows the answer is "argument out of range", even
// when junk follows it; no digit at all, or anything after the digits, is
// "invalid integer".
func fromChars(s string) (uint64, string) {
	digits := 0
	for digits < len(s) && s[digits] >= '0' && s[digits] <= '9' {
		digits++
	}
	if digits == 0 {
		return 0, "invalid integer"
	}
	var n uint64
	for _, c := range []byte(s[:digits]) {
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, "argument out of range"
		}
		n = n*10 + d
	}
	if digits < len(s) {
		return 0, "invalid integer"
	}
	return n, ""
}
