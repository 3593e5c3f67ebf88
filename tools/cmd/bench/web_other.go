//go:build !unix

package main

import (
	"errors"
	"time"
)

// selfCPU is not measured here: the experiment needs Linux.
func selfCPU() time.Duration { return 0 }

// fetch needs Unix sockets read by plain system calls (web_unix.go).
func fetch(addr, uri string, size int, deadline time.Time) fetchResult {
	return fetchResult{err: errors.New("the web experiment runs on Linux")}
}
