package web

import (
	"fmt"
	"strings"
)

// Policy is the order in which workers take requests from the buffer.
type Policy int

const (
	// FIFO serves connections in the order they arrived. The master does not
	// read them; a worker reads the request when it takes the connection.
	FIFO Policy = iota
	// SFF serves the request for the smallest file first. The master must
	// read each request and stat its file before it can place it.
	SFF
)

func (p Policy) String() string {
	if p == SFF {
		return "SFF"
	}
	return "FIFO"
}

// ParsePolicy reads a -s flag: "FIFO" or "SFF" in any case, or the
// original's numbers 0 and 1.
func ParsePolicy(s string) (Policy, error) {
	switch strings.ToUpper(s) {
	case "FIFO", "0":
		return FIFO, nil
	case "SFF", "1":
		return SFF, nil
	}
	return FIFO, fmt.Errorf("unknown scheduling policy %q (want FIFO or SFF)", s)
}
