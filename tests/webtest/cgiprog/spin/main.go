// Command spin is spin.cgi, and the suite's other CGI programs: what it does
// depends on the name it is installed under (see package cgiprog); under a
// name that says none (or started with an empty argument list by a server
// whose executable name says none), it is spin.cgi.
//
//	go build -o www/spin.cgi ./tests/webtest/cgiprog/spin
package main

import (
	"os"

	"serverlab/tests/webtest/cgiprog"
)

func main() { os.Exit(cgiprog.MainOr("spin")) }
