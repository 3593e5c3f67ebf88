package grade

import (
	"context"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// callerMemory vets every function or method the allow-list lets a chapter
// call in the packages that hand memory to the kernel or to assembly
// (syscall, golang.org/x/sys/unix, crypto/…) and that takes a slice or a
// pointer: the kernel or the assembly may write it, and the race detector
// sees no such write unless the package tells it (cheater5: unix.EpollWait
// into a shared []unix.EpollEvent, crypto/rand.Read into a shared flag, no
// report). Each entry says why the call is safe: it only reads what it is
// handed, or it reports its writes. A call whose memory the kernel fills
// unseen is refused (never) and made by given code that writes the memory
// again in Go (rawsys.Wait, guard.Random).
var callerMemory = map[string]string{
	"golang.org/x/sys/unix.EpollCtl":    "the kernel reads the event (ADD, MOD) and writes none back; what it hands back comes through rawsys.Wait or PollNow, which write it again in Go",
	"golang.org/x/sys/unix.Read":        "x/sys/unix reports the bytes read to the race detector (raceWriteRange)",
	"golang.org/x/sys/unix.Write":       "the kernel reads the buffer; x/sys/unix reports the read (raceReadRange)",
	"golang.org/x/sys/unix.Openat2":     "the kernel reads the OpenHow",
	"golang.org/x/sys/unix.SendmsgN":    "the kernel reads the data and the control message",
	"crypto/hmac.New":                   "copies the key in Go code",
	"crypto/hmac.Equal":                 "compares: reads both",
	"crypto/subtle.ConstantTimeCompare": "compares: reads both",
	"crypto/pbkdf2.Key":                 "reads the salt; the key it returns is its own",
	"crypto/tls.Server":                 "keeps the Config; writes no caller memory through assembly (records are its own buffers)",
}

// Every allowed call into those packages that takes caller memory is vetted
// in callerMemory, so that a new entry of the allow-list cannot let the
// kernel or assembly write a student's shared memory unseen.
func TestAllowedCallsVetCallerMemory(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	kernelish := func(ip string) bool {
		return ip == "syscall" || ip == "golang.org/x/sys/unix" || ip == "crypto" || strings.HasPrefix(ip, "crypto/")
	}
	pkgs := map[string]bool{}
	var entries []string
	for _, list := range chapterAllow {
		for _, e := range list {
			for ip := range allowPackages(e) {
				if kernelish(ip) {
					pkgs[ip] = true
					entries = append(entries, e)
				}
			}
		}
	}
	shared.Lock()
	defer shared.Unlock()
	shared.reset(root, nil)
	if _, err := exportData(context.Background(), root, slices.Sorted(func(yield func(string) bool) {
		for p := range pkgs {
			if !yield(p) {
				return
			}
		}
	})); err != nil {
		t.Fatal(err)
	}
	takesMemory := func(sig *types.Signature) bool {
		for i := range sig.Params().Len() {
			switch u := sig.Params().At(i).Type().Underlying().(type) {
			case *types.Slice, *types.Pointer:
				return true
			case *types.Basic:
				if u.Kind() == types.UnsafePointer {
					return true
				}
			}
		}
		return false
	}
	checked, used := 0, map[string]bool{}
	for _, e := range slices.Compact(slices.Sorted(slices.Values(entries))) {
		var ip string
		for p := range allowPackages(e) {
			ip = p
		}
		pkg, err := shared.imp.ImportFrom(ip, root, 0)
		if err != nil {
			t.Fatalf("%s: %v", ip, err)
		}
		member := strings.TrimPrefix(e, ip+".")
		name, rest, _ := strings.Cut(member, ".")
		obj := pkg.Scope().Lookup(name)
		var sigs map[string]*types.Signature
		switch {
		case obj == nil:
			t.Errorf("%s: no %s in %s", e, name, ip)
			continue
		case rest == "":
			if fn, ok := obj.(*types.Func); ok {
				sigs = map[string]*types.Signature{e: fn.Signature()}
			} // a type alone allows none of its methods (member asks for Type.Method or Type.*)
		default:
			if tn, ok := obj.(*types.TypeName); ok {
				sigs = methodsOf(ip+"."+name, tn.Type(), rest)
			}
		}
		for full, sig := range sigs {
			checked++
			used[full], used[e] = true, true
			if takesMemory(sig) && callerMemory[full] == "" && callerMemory[e] == "" {
				t.Errorf("%s (allowed by %q) takes a slice or pointer the kernel or assembly may write unseen by the race detector: vet it in callerMemory, or refuse it and give a wrapper that writes the memory again in Go", full, e)
			}
		}
	}
	for e := range callerMemory {
		if !used[e] {
			t.Errorf("callerMemory vets %s, which no chapter is allowed: remove it", e)
		}
	}
	t.Logf("%d allowed calls vetted", checked)
}

// allowPackages yields the import path an allow-list entry names a member
// of (nothing for a whole package).
func allowPackages(e string) func(func(string) bool) {
	return func(yield func(string) bool) {
		slash := strings.LastIndex(e, "/")
		dot := strings.Index(e[slash+1:], ".")
		if dot < 0 {
			return
		}
		ip := e[:slash+1+dot]
		// "github.com/nats-io/nats.go": a dot in the last element that
		// starts no exported member is part of the path.
		if m := e[slash+1+dot+1:]; m == "" || !strings.ContainsAny(m[:1], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
			return
		}
		yield(ip)
	}
}

// methodsOf is the method named method ("*": every method) of the type t
// and of *t, by full name.
func methodsOf(typeName string, t types.Type, method string) map[string]*types.Signature {
	out := map[string]*types.Signature{}
	ms := types.NewMethodSet(types.NewPointer(t))
	if types.IsInterface(t) {
		ms = types.NewMethodSet(t)
	}
	for m := range ms.Methods() {
		if method == "*" || m.Obj().Name() == method {
			if fn, ok := m.Obj().(*types.Func); ok && fn.Exported() {
				out[typeName+"."+fn.Name()] = fn.Signature()
			}
		}
	}
	return out
}
