//go:build !unix

package main

// raiseFDLimit has nothing to raise here: the experiments need Linux's /proc
// anyway, and say so when they sample the server.
func raiseFDLimit() {}
