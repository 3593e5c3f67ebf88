// Package evloop is the chapter 05 server on the open track: an event loop
// on one goroutine, and the chat server (docs/protocols.md §1) and the stock
// server (§3) on top of it, in a design of your own.
//
// What is kept from the guided starter, as your chapter has it: the drains
// (drain.go), whose API the suite checks directly. They are still exercises
// 5.1 and 5.2: stubs with their contracts until you write them (make hint
// EX=5.1). What is given: the system calls (serverlab/tools/given/rawsys,
// golang.org/x/sys/unix), the protocols' codecs and the configurations,
// which the tests and the programs fill in. What the servers must do is the
// lesson's and its "design it yourself" section's; the suites in
// tests/epolltest, tests/chattest and tests/stocktest check it.
//
// Your code may call only what the chapter's allow-list names, beside its
// own code and the standard library's ordinary packages: make allowed
// CH=05 lists it. make grade refuses anything else before it compiles
// (make status shows the refusal), however well go test passes.
//
// It builds on Linux only (epoll).
package evloop
