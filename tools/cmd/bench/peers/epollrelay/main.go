//go:build linux

// Command epollrelay runs the course's own minimal chat relay in C on epoll
// (src/epollrelay.c): the yardstick chapter 05's loop is
// measured against, with the chat servers' arguments, so that the chat
// experiments can run it like any server:
//
//	go run ./tools/cmd/bench c10k -servers ch02=./solutions/02/cmd/chatserver,ch05=./solutions/05/cmd/chatserver,c-epoll=./tools/cmd/bench/peers/epollrelay
//
// It compiles the C source with gcc -O2 (once per version of the source,
// into the user's cache folder) and then execs it in its own place, so that
// the process the experiment measures is the C program.
package main

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

//go:embed src/epollrelay.c
var source []byte

func main() {
	bin, err := build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "epollrelay:", err)
		os.Exit(1)
	}
	err = syscall.Exec(bin, append([]string{bin}, os.Args[1:]...), os.Environ())
	fmt.Fprintln(os.Stderr, "epollrelay: exec:", err)
	os.Exit(1)
}

// build compiles the embedded source unless this version is built already.
func build() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256(source)
	dir := filepath.Join(cache, "serverlab-epollrelay")
	bin := filepath.Join(dir, "epollrelay-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	src := bin + ".c"
	if err := os.WriteFile(src, source, 0o644); err != nil {
		return "", err
	}
	tmp := bin + ".tmp"
	cmd := exec.Command("gcc", "-O2", "-o", tmp, src)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("gcc: %w", err)
	}
	return bin, os.Rename(tmp, bin)
}
