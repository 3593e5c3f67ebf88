// Package evloop is the chapter 05 server: an epoll event loop on one
// goroutine, and the chat server (docs/protocols.md §1) and the stock
// server (§3) on top of it.
//
// Chapter 02 gave every client a goroutine and chapter 04 a worker; here one
// goroutine serves every client. It asks the kernel, through epoll, which
// sockets are ready, reads what has arrived into one shared buffer, hands it
// to the server's Handler, and writes replies without ever blocking. No
// net.Conn and no goroutine per client: an idle connection costs a small
// struct and nothing else.
//
// The loop uses epoll, eventfd and accept4 through golang.org/x/sys/unix, so
// it builds on Linux only.
package evloop
