package discoverytest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"

	"serverlab/tests/testkit"
	"serverlab/tools/given/wire"
)

// The codec exercises (1.1, 1.2) are about writing the codec: one that hands
// the work to tools/given/wire agrees with it on every input, and teaches nothing.
// These checks catch it, at run time (tools/given/wire's codec on the stack while
// the student's function reads or writes) and, when the source file can be
// read, in the function's body.

// codecFuncs are the functions of tools/given/wire that do a codec exercise's work.
var codecFuncs = []string{"ReadFrame", "WriteFrame", "Decode", "DecodeHeader", "Encode", "Append"}

// stackReader is a reader that notes whether a tools/given/wire codec function
// is on the stack when it is read from.
type stackReader struct {
	r   io.Reader
	hit string
}

func (s *stackReader) Read(p []byte) (int, error) {
	if s.hit == "" {
		s.hit = wireOnStack()
	}
	return s.r.Read(p)
}

type stackWriter struct {
	w   io.Writer
	hit string
}

func (s *stackWriter) Write(p []byte) (int, error) {
	if s.hit == "" {
		s.hit = wireOnStack()
	}
	return s.w.Write(p)
}

// wireOnStack names the tools/given/wire codec function on the calling stack, if any.
func wireOnStack() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if name, ok := strings.CutPrefix(f.Function, "serverlab/tools/given/wire."); ok {
			return "wire." + name
		}
		if !more {
			return ""
		}
	}
}

// checkOwnCode fails the check if fn, the student's codec function, calls a
// codec function of tools/given/wire in its body.
func checkOwnCode(k *testkit.T, fn any, what string) {
	k.Helper()
	pc := reflect.ValueOf(fn).Pointer()
	f := runtime.FuncForPC(pc)
	if f == nil {
		return
	}
	file, _ := f.FileLine(pc)
	if !filepath.IsAbs(file) {
		// A build with -trimpath names the file by its import path; the test
		// runs in the package's folder, which holds it.
		file = filepath.Base(file)
	}
	name := f.Name()[strings.LastIndexByte(f.Name(), '.')+1:]
	parsed, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		return // no source at hand: the run-time check stands alone
	}
	for _, d := range parsed.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name != name || fd.Body == nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "wire" && isCodecFunc(sel.Sel.Name) {
				k.Errorf("%s calls wire.%s: exercise %s is to write the codec yourself (the constants, Frame "+
					"and the errors of tools/given/wire are yours to use; its codec is the reference your code is "+
					"checked against)", what, sel.Sel.Name, k.Exercise())
			}
			return true
		})
	}
}

func isCodecFunc(name string) bool {
	for _, f := range codecFuncs {
		if f == name {
			return true
		}
	}
	return false
}

// checkNotDelegatedRead reads one frame through a stackReader.
func checkNotDelegatedRead(k *testkit.T, impl Impl) {
	k.Helper()
	r := &stackReader{r: strings.NewReader(string(testkit.Encode(sampleFrames()[1])))}
	impl.ReadFrame(r)
	if r.hit != "" {
		k.Errorf("ReadFrame reads its input through %s: exercise 1.1 is to write the decoder yourself", r.hit)
	}
	checkOwnCode(k, impl.ReadFrame, "ReadFrame")
}

// checkNotDelegatedWrite writes one frame through a stackWriter.
func checkNotDelegatedWrite(k *testkit.T, impl Impl) {
	k.Helper()
	w := &stackWriter{w: io.Discard}
	impl.WriteFrame(w, wire.Frame{Type: wire.Broadcast, Sender: "bob", Payload: []byte("x")})
	if w.hit != "" {
		k.Errorf("WriteFrame writes through %s: exercise 1.2 is to write the encoder yourself", w.hit)
	}
	checkOwnCode(k, impl.WriteFrame, "WriteFrame")
}
