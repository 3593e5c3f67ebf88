package main

// defaultEngine is the http mode's closed-loop engine: the event loops where
// there is epoll.
const defaultEngine = "epoll"
