// Package evloop is the chapter 05 server on the open track: an event loop
// on one goroutine, and the chat server (docs/protocols.md §1) and the stock
// server (§3) on top of it, in a design of your own.
//
// What is given: the drains (exercises 5.1 and 5.2; the suite checks their
// API directly), the system calls (serverlab/tools/given/rawsys,
// golang.org/x/sys/unix), the protocols' codecs and the configurations,
// which the tests and the programs fill in. What the servers must do is the
// lesson's and its "design it yourself" section's; the suites in
// tests/epolltest, tests/chattest and tests/stocktest check it.
//
// It builds on Linux only (epoll).
package evloop
