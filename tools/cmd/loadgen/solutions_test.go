//go:build solutions

// The end-to-end tests drive the load generator against the course's
// reference servers, which only the maintainers' tree has (the student release
// ships no solutions/). They are behind the "solutions" build tag, which make
// test and make unit set; without it, nosolutions_test.go skips them.

package main

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	discovery "serverlab/solutions/01"
	chat "serverlab/solutions/02"
	jobserver "serverlab/solutions/03"
	stock "serverlab/solutions/04"
	"serverlab/tools/given/jobs"
	"serverlab/tools/given/stockfile"
)

// startChat runs the chapter 02 reference server on usersPath until the test
// ends.
func startChat(t *testing.T, usersPath string) string {
	t.Helper()
	srv, err := chat.New(chat.Config{UsersPath: usersPath})
	return serve(t, srv, err)
}

// startJobServer runs the chapter 03 reference server until the test ends.
func startJobServer(t *testing.T) string {
	t.Helper()
	srv, err := jobserver.New(jobserver.Config{Workers: 2, QueueCap: 64})
	return serve(t, srv, err)
}

// startDiscovery runs the chapter 01 reference server until the test ends.
func startDiscovery(t *testing.T, timeout time.Duration) (addr, usersPath string) {
	t.Helper()
	usersPath = filepath.Join(t.TempDir(), "users.txt")
	srv, err := discovery.New(discovery.Config{UsersPath: usersPath, Timeout: timeout})
	return serve(t, srv, err), usersPath
}

// startStock runs the chapter 04 reference server on stocks 1..10 until the
// test ends, and returns its address and stock file.
func startStock(t *testing.T) (addr, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "stock.txt")
	var stocks []stockfile.Stock
	for id := 1; id <= 10; id++ {
		stocks = append(stocks, stockfile.Stock{ID: id, Count: 100, Price: 1000 * id})
	}
	if err := stockfile.Save(path, stocks); err != nil {
		t.Fatal(err)
	}
	srv, err := stock.New(stock.Config{StockPath: path, Workers: 4})
	return serve(t, srv, err), path
}

// correct answers a request as the protocol says, with id n.
func correct(line string, n int) string {
	req, err := jobserver.Parse([]byte(line))
	if err != nil {
		return fmt.Sprintf("ERROR %d %v", n, err)
	}
	var s jobs.Scratch
	answer, err := jobserver.Execute(req, &s, jobserver.AppendOK(nil, uint64(n)))
	if err != nil {
		return fmt.Sprintf("ERROR %d %v", n, err)
	}
	return string(answer)
}
