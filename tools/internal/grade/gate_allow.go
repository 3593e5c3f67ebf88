// The gate's allow-list: what each chapter's code may reference. This file is
// the one place it lives; gate_test.go type-checks every solution and starter
// with it, and fails both when one uses something not listed here and when an
// entry here is used by no chapter (so the list cannot rot).

package grade

import (
	"fmt"
	"path"
	"strings"
)

// Entries name what they allow by import path:
//
//	"fmt"                      the whole package
//	"syscall.Flock"            one package-level identifier
//	"runtime.MemStats.*"       every field and method of that type
//	"os/exec.Cmd.Wait"         one field or method
//
// A standard-library package restrictedWhy does not name is ordinary: every
// chapter may use it whole, except the members in never. A package of the
// chapter's own tree is always allowed. Everything else (restricted
// packages, module dependencies, the course's given code) is allowed only
// where listed.

// restricted are the standard-library packages that reach the process
// itself: its descriptors, memory, threads, children or the race detector.
// They are allowed member by member, per chapter; the value is what a
// refusal says about the package.
var restricted = map[string]string{
	"syscall":          "raw system calls reach the descriptors the grader gave the process",
	"os/exec":          "starting programs can re-execute the graded process under other settings",
	"runtime":          "the runtime package can switch the race detector's view off",
	"runtime/debug":    "the runtime's settings are the grader's to measure",
	"runtime/pprof":    "profiles are the grader's to take",
	"runtime/trace":    "traces are the grader's to take",
	"runtime/metrics":  "the runtime's figures are the grader's to measure",
	"runtime/race":     "the race detector is the grader's",
	"runtime/cgo":      "cgo runs C code",
	"unsafe":           "unsafe reads and writes any memory, the race detector's and the harness's included",
	"reflect":          "reflect reaches unexported state and raw pointers (Value.UnsafePointer)",
	"plugin":           "plugins load code the grader has not seen",
	"testing":          "the testing package is the harness's, not the student's (test files may use it)",
	"testing/fstest":   "the testing packages are the harness's",
	"testing/iotest":   "the testing packages are the harness's",
	"testing/quick":    "the testing packages are the harness's",
	"testing/slogtest": "the testing packages are the harness's",
	"testing/synctest": "the testing packages are the harness's",
}

// unseenWriters are the trees of standard packages whose assembly can write
// memory a caller hands it (a destination slice, a big.Int's words) without
// the race detector seeing the write: a racy counter copied through
// aes.Block.Encrypt or big.Int.Add goes unreported. Every package in them
// is restricted, member by member. gate_asm_test.go derives the packages
// with assembly from the Go toolchain and fails on one it has not vetted,
// so that a new release cannot add one unseen.
var unseenWriters = map[string]string{
	"crypto":                     "its assembly (AES, CTR, XOR, hashes, big numbers) writes memory the race detector does not see: a race through it would go unreported",
	"math/big":                   "its assembly writes a number's words, which SetBits shares with the caller, unseen by the race detector: a race through it would go unreported",
	"vendor/golang.org/x/crypto": "its assembly (ChaCha20, Poly1305) writes memory the race detector does not see",
}

// handsNoCallerMemory are the exported standard packages that use an
// unseenWriters package yet hand it none of their caller's memory (only
// buffers of their own), each with why; gate_asm_test.go vets them. Any
// other package that uses one is restricted like it (net/http, through
// crypto/tls; go/constant, through math/big): the gate learns which from
// the go command's list of their dependencies. None is needed by a chapter
// today.
var handsNoCallerMemory = map[string]string{}

// restrictedWhy reports whether a standard package is restricted (allowed
// member by member, per chapter), and what a refusal says about it: the
// restricted list, the unseenWriters trees, and the packages the go command
// listed as using one (shared.hidden). It is the one place the gate asks.
func restrictedWhy(ip string) (string, bool) {
	if why, ok := restricted[ip]; ok {
		return why, true
	}
	if root, ok := unseenTree(ip); ok {
		return unseenWriters[root], true
	}
	// Only standard packages: one outside it (nats.go, through crypto/tls)
	// is allowed where its chapter's list names it.
	if first, _, _ := strings.Cut(ip, "/"); strings.Contains(first, ".") {
		return "", false
	}
	if dep := shared.hidden[ip]; dep != "" {
		root, _ := unseenTree(dep)
		return fmt.Sprintf("it uses %s, and %s", dep, unseenWriters[root]), true
	}
	return "", false
}

// unseenTree reports the unseenWriters tree ip belongs to.
func unseenTree(ip string) (string, bool) {
	for p := ip; ; p = path.Dir(p) {
		if _, ok := unseenWriters[p]; ok {
			return p, true
		}
		if !strings.Contains(p, "/") {
			return "", false
		}
	}
}

// hidesWrites returns the first package in an unseenWriters tree among a
// package's direct imports, else among all its dependencies (as the go
// command lists them), "" if none is or the package is vetted in
// handsNoCallerMemory.
func hidesWrites(ip string, imports, deps []string) string {
	if _, ok := handsNoCallerMemory[ip]; ok {
		return ""
	}
	for _, list := range [][]string{imports, deps} {
		for _, d := range list {
			if _, ok := unseenTree(d); ok {
				return d
			}
		}
	}
	return ""
}

// never are members of ordinary packages no chapter may use unless its
// solution needs them (and its list names them): they turn a
// descriptor number into a file or connection (the grader's own included),
// or start a process bypassing os/exec.
var never = map[string]string{
	"os.NewFile":                "os.NewFile makes a file of any descriptor, the grader's included",
	"os.StartProcess":           "starting processes is not part of any chapter",
	"os.FindProcess":            "signalling other processes is not part of any chapter",
	"net.FileConn":              "net.FileConn makes a connection of any descriptor, the grader's included",
	"net.FileListener":          "net.FileListener makes a listener of any descriptor, the grader's included",
	"net.FilePacketConn":        "net.FilePacketConn makes a connection of any descriptor, the grader's included",
	"net.UnixConn.WriteMsgUnix": "sending descriptors (SCM_RIGHTS) can copy any descriptor, the grader's included",
	"net.UnixConn.ReadMsgUnix":  "receiving descriptors (SCM_RIGHTS) can copy any descriptor, the grader's included",
	"os/signal.Ignore":          "ignoring signals is not part of any chapter",
	"os/signal.Reset":           "the signals' handling is the runtime's",
	// The kernel writes these calls' buffers, and unlike read(2), which the
	// syscall package reports to the race detector, recvfrom and recvmsg
	// are not reported: a race on a buffer they fill goes unseen. No
	// chapter reads datagrams (found by round 4's gate fix, a shared buffer
	// written by ReadFromUDP while another goroutine read it: no report).
	"net.PacketConn.ReadFrom":         kernelWrites,
	"net.UDPConn.ReadFrom":            kernelWrites,
	"net.UDPConn.ReadFromUDP":         kernelWrites,
	"net.UDPConn.ReadFromUDPAddrPort": kernelWrites,
	"net.UDPConn.ReadMsgUDP":          kernelWrites,
	"net.UDPConn.ReadMsgUDPAddrPort":  kernelWrites,
	"net.IPConn.ReadFrom":             kernelWrites,
	"net.IPConn.ReadFromIP":           kernelWrites,
	"net.IPConn.ReadMsgIP":            kernelWrites,
	"net.UnixConn.ReadFrom":           kernelWrites,
	"net.UnixConn.ReadFromUnix":       kernelWrites,
	// Likewise epoll_wait's events and getrandom's bytes (cheater5, D and
	// C): the given code makes these calls and writes what the kernel
	// filled once more in Go, for the race detector to see.
	"golang.org/x/sys/unix.EpollWait": "the kernel fills its events unseen by the race detector, so a race on them would go unreported: rawsys.Wait is the same call with the events written again in Go",
	"crypto/rand.Read":                "getrandom(2) fills its buffer unseen by the race detector, so a race on it would go unreported: guard.Random is the same with the bytes written again in Go",
}

// kernelWrites is why never refuses the datagram reads.
const kernelWrites = "the kernel fills its buffer unseen by the race detector (recvfrom and recvmsg are not reported, read is): a race on it would go unreported"

// everyChapter is allowed in every chapter besides the ordinary packages:
// the course's helper every program uses, and runtime.Gosched, a hint to
// the scheduler that reaches nothing (the mutant catalogue widens a race's
// window with it, and so may a student).
var everyChapter = []string{
	"serverlab/tools/given/lab",
	"runtime.Gosched",
}

// testFiles are what test files of the student's own subpackages (not the
// chapter's wiring, which is the course's) may use besides the chapter's
// list: the testing packages, and reflect for reflect.DeepEqual. The
// grader never links them into what it runs; the gate reads them because a
// build could.
var testFiles = []string{"testing", "testing/fstest", "testing/iotest", "testing/quick", "testing/slogtest", "testing/synctest", "reflect"}

// chapterAllow is what each chapter's lesson and reference solution use
// beyond the ordinary packages, and so what its student's code may use.
var chapterAllow = map[string][]string{
	"01": {
		// The codec's constants and types; its functions cost 1.1 and 1.2
		// (the rubric's forbid list): the student writes them.
		"serverlab/tools/given/wire",
		"serverlab/tools/given/users",
		// Passwords compared in constant time (crypto/ is restricted: its
		// assembly writes memory the race detector does not see).
		"crypto/subtle.ConstantTimeCompare",
	},
	"02": {
		"serverlab/tools/given/wire",
		"serverlab/tools/given/users",
		// Passwords compared in constant time (crypto/ is restricted: its
		// assembly writes memory the race detector does not see).
		"crypto/subtle.ConstantTimeCompare",
	},
	"03": {
		"serverlab/tools/given/jobs",
		"runtime.NumCPU",
		// send's fast path, one non-blocking write: given code, so that
		// the chapter's own code needs no raw descriptor.
		"serverlab/tools/given/trywrite",
		// The server's -cpuprofile flag.
		"runtime/pprof.StartCPUProfile", "runtime/pprof.StopCPUProfile",
	},
	"04": {
		"serverlab/tools/given/stockfile",
		"serverlab/tools/given/stockproto",
		"runtime.GOMAXPROCS",
	},
	"05": {
		"serverlab/tools/given/wire",
		"serverlab/tools/given/users",
		"serverlab/tools/given/stockfile",
		"serverlab/tools/given/stockproto",
		"serverlab/tools/given/rawsys",
		// Passwords compared in constant time (crypto/ is restricted: its
		// assembly writes memory the race detector does not see).
		"crypto/subtle.ConstantTimeCompare",
		"syscall.Conn", "syscall.Conn.SyscallConn", "syscall.RawConn.Control",
		// The event loop: epoll, non-blocking accept, read and write, an
		// eventfd to wake it, a spare descriptor for EMFILE.
		"golang.org/x/sys/unix.EpollCreate1", "golang.org/x/sys/unix.EpollCtl",
		"golang.org/x/sys/unix.EpollEvent", "golang.org/x/sys/unix.EpollEvent.*",
		"golang.org/x/sys/unix.EPOLLIN", "golang.org/x/sys/unix.EPOLLOUT", "golang.org/x/sys/unix.EPOLLRDHUP",
		"golang.org/x/sys/unix.EPOLLHUP", "golang.org/x/sys/unix.EPOLLERR",
		"golang.org/x/sys/unix.EPOLL_CTL_ADD", "golang.org/x/sys/unix.EPOLL_CTL_MOD", "golang.org/x/sys/unix.EPOLL_CTL_DEL",
		"golang.org/x/sys/unix.EPOLL_CLOEXEC",
		"golang.org/x/sys/unix.Accept4", "golang.org/x/sys/unix.Read", "golang.org/x/sys/unix.Write", "golang.org/x/sys/unix.Close",
		"golang.org/x/sys/unix.SetNonblock", "golang.org/x/sys/unix.SetsockoptInt",
		"golang.org/x/sys/unix.IPPROTO_TCP", "golang.org/x/sys/unix.TCP_NODELAY",
		"golang.org/x/sys/unix.SOCK_CLOEXEC", "golang.org/x/sys/unix.SOCK_NONBLOCK",
		"golang.org/x/sys/unix.Sockaddr", "golang.org/x/sys/unix.SockaddrInet4", "golang.org/x/sys/unix.SockaddrInet4.*",
		"golang.org/x/sys/unix.SockaddrInet6", "golang.org/x/sys/unix.SockaddrInet6.*",
		"golang.org/x/sys/unix.Eventfd", "golang.org/x/sys/unix.EFD_NONBLOCK", "golang.org/x/sys/unix.EFD_CLOEXEC",
		"golang.org/x/sys/unix.Open", "golang.org/x/sys/unix.O_RDONLY", "golang.org/x/sys/unix.O_CLOEXEC",
		"golang.org/x/sys/unix.FcntlInt", "golang.org/x/sys/unix.F_DUPFD_CLOEXEC",
		"golang.org/x/sys/unix.EINTR", "golang.org/x/sys/unix.EAGAIN", "golang.org/x/sys/unix.ECONNABORTED",
		"golang.org/x/sys/unix.EMFILE", "golang.org/x/sys/unix.ENFILE",
		// The lingering close after last words: half-close, then drain.
		"golang.org/x/sys/unix.Shutdown", "golang.org/x/sys/unix.SHUT_WR",
	},
	"06": {
		// CGI: a child process per request, in its own process group,
		// killed with it.
		"os/exec.CommandContext", "os/exec.Cmd", "os/exec.ErrWaitDelay",
		"os/exec.Cmd.Env", "os/exec.Cmd.Stdout", "os/exec.Cmd.WaitDelay", "os/exec.Cmd.Cancel",
		"os/exec.Cmd.SysProcAttr", "os/exec.Cmd.Start", "os/exec.Cmd.Wait", "os/exec.Cmd.Process",
		"syscall.SysProcAttr", "syscall.SysProcAttr.Setpgid",
		"syscall.Kill", "syscall.SIGKILL", "syscall.ESRCH",
		// The listener's TCP_DEFER_ACCEPT and the sendfile-like paths.
		"syscall.RawConn", "syscall.RawConn.Control", "syscall.RawConn.Write",
		"syscall.SetsockoptInt", "syscall.IPPROTO_TCP", "syscall.TCP_DEFER_ACCEPT", "syscall.O_NONBLOCK",
		// The document root, opened beneath itself (openat2), its
		// descriptor made a file.
		"os.NewFile",
		"golang.org/x/sys/unix.Openat2", "golang.org/x/sys/unix.OpenHow", "golang.org/x/sys/unix.OpenHow.*",
		"golang.org/x/sys/unix.RESOLVE_BENEATH", "golang.org/x/sys/unix.RESOLVE_NO_MAGICLINKS",
		"golang.org/x/sys/unix.Open", "golang.org/x/sys/unix.Close", "golang.org/x/sys/unix.FcntlInt",
		"golang.org/x/sys/unix.F_SETFL", "golang.org/x/sys/unix.SendmsgN", "golang.org/x/sys/unix.MSG_MORE",
		"golang.org/x/sys/unix.O_RDONLY", "golang.org/x/sys/unix.O_CLOEXEC", "golang.org/x/sys/unix.O_PATH",
		"golang.org/x/sys/unix.O_NONBLOCK", "golang.org/x/sys/unix.O_DIRECTORY",
		"golang.org/x/sys/unix.EINTR", "golang.org/x/sys/unix.EAGAIN", "golang.org/x/sys/unix.EPERM", "golang.org/x/sys/unix.ENOSYS",
	},
	"07": {
		"serverlab/tools/given/chatcore/proto",
		"golang.org/x/crypto/argon2",
		"modernc.org/sqlite",
		// SQLite's result codes, not its C functions (they take raw pointers).
		"modernc.org/sqlite/lib.SQLITE_CONSTRAINT",
		"runtime.GOMAXPROCS",
		// One server per database: the lock is given code, not a syscall.
		"serverlab/tools/given/filelock",
		// The limits chapters 07 and 08 share (caps, input budgets, the
		// per-address login throttle): given code, taught in the lesson.
		"serverlab/tools/given/chatcore/guard",
		// Password hashing and the login throttle's keyed MAC: random
		// salts and keys, HMAC-SHA-256, constant-time comparison; and TLS
		// on the listener. The hashes write only their own state; none of
		// these hands the race detector's blind assembly a buffer of the
		// student's to copy through.
		"crypto/hmac.New", "crypto/hmac.Equal", "crypto/sha256.New", "crypto/sha256.Size",
		"crypto/subtle.ConstantTimeCompare",
		"crypto/tls.Config", "crypto/tls.Config.Certificates", "crypto/tls.Config.MinVersion", "crypto/tls.Certificate",
		"crypto/tls.LoadX509KeyPair", "crypto/tls.VersionTLS12", "crypto/tls.Server", "crypto/tls.Conn",
	},
	"08": {
		"serverlab/tools/given/chatcore/proto",
		"github.com/nats-io/nats.go",
		"github.com/nats-io/nats.go/jetstream",
		"github.com/nats-io/nuid",
		// The embedded node: its options, start and stop. Not the whole
		// package: it also signals processes by name (ProcessSignal) and
		// renames the process (SetProcessName), which a fresh cheater
		// (round 4, a13) used to find and signal the grader's processes.
		"github.com/nats-io/nats-server/v2/server.NewServer",
		"github.com/nats-io/nats-server/v2/server.Options", "github.com/nats-io/nats-server/v2/server.Options.*",
		"github.com/nats-io/nats-server/v2/server.ClusterOpts.*",
		"github.com/nats-io/nats-server/v2/server.RoutesFromStr", "github.com/nats-io/nats-server/v2/server.RANDOM_PORT",
		"github.com/nats-io/nats-server/v2/server.Server",
		"github.com/nats-io/nats-server/v2/server.Server.Start", "github.com/nats-io/nats-server/v2/server.Server.Shutdown",
		"github.com/nats-io/nats-server/v2/server.Server.WaitForShutdown",
		"github.com/nats-io/nats-server/v2/server.Server.ReadyForConnections",
		"github.com/nats-io/nats-server/v2/server.Server.SetLoggerV2",
		// The hash queue's slots, one per core, as chapter 07's.
		"runtime.GOMAXPROCS",
		// One server per store, as chapter 07's.
		"serverlab/tools/given/filelock",
		// The limits shared with chapter 07.
		"serverlab/tools/given/chatcore/guard",
		// Password hashing (PBKDF2-HMAC-SHA-256) and the admission
		// throttle's keyed MAC, as chapter 07's.
		"crypto/hmac.New", "crypto/hmac.Equal", "crypto/sha256.New", "crypto/sha256.Size",
		"crypto/pbkdf2.Key", "crypto/subtle.ConstantTimeCompare",
	},
}
