// What the screening's rules look for inside a declaration: start-up code,
// exits, the program's arguments (screen.go walks the files and records the
// notes).

package grade

import (
	"go/ast"
	"path"
)

// startupCalls are the functions a package-level initialiser may call: pure
// constructors that cannot reach the process, the harness or the network,
// and call no method of the student's. (fmt.Errorf may call an argument's
// Error or String method: it is allowed only with safe arguments, see
// safeArgs.)
var startupCalls = map[string]bool{
	"errors.New": true, "regexp.MustCompile": true, "regexp.MustCompilePOSIX": true,
	"time.Unix": true, "time.Date": true, "bufio.NewReaderSize": true, "bufio.NewWriterSize": true,
	"strings.NewReplacer": true, "big.NewInt": true, "slog.New": true,
	// builtins and conversions to predeclared types
	"make": true, "new": true, "len": true, "cap": true, "append": true, "min": true, "max": true,
	"string": true, "byte": true, "rune": true, "int": true, "int8": true, "int16": true, "int32": true,
	"int64": true, "uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"float32": true, "float64": true, "uintptr": true, "bool": true, "any": true, "error": true,
	"time.Duration": true, "os.FileMode": true, "fs.FileMode": true,
	"unsafe.Sizeof": true, "unsafe.Alignof": true, "unsafe.Offsetof": true, // constants
}

// exitCalls end the process without a word from the testing package.
var exitCalls = map[string]bool{
	"os.Exit": true, "syscall.Exit": true, "golang.org/x/sys/unix.Exit": true,
}

// argsRefs are how code reads the test binary's command line or asks
// whether it runs under a test.
var argsRefs = map[string]bool{
	"os.Args": true, "flag.CommandLine": true, "flag.Lookup": true, "flag.Parse": true, "flag.Parsed": true,
	"flag.Args": true, "flag.Arg": true, "flag.NArg": true, "flag.NFlag": true, "flag.Visit": true, "flag.VisitAll": true,
	"flag.Set": true,
}

// startup screens a package-level var declaration: its initialisers run
// before the harness has its secret, so they may call only pure
// constructors. Function literals are fine as values; calling one is not.
func (s *screener) startup(d *ast.GenDecl, rel string, imports map[string]string) {
	for _, spec := range d.Specs {
		for _, v := range spec.(*ast.ValueSpec).Values {
			ast.Inspect(v, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					return false // a value, not run at start-up
				}
				c, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				name := callName(c.Fun)
				if name == "fmt.Errorf" && s.safeArgs(c.Args, path.Dir(rel), imports) {
					return true
				}
				if !startupCalls[name] && !isTypeExpr(c.Fun) {
					if name == "" {
						name = "a function call"
					}
					s.hit(ruleStartup, "package-level initialiser calls "+name, rel, s.fset.Position(c.Pos()).Line)
				}
				return true
			})
		}
	}
}

// safeArgs reports whether formatting args calls no method of the
// student's: literals, the given code's and the standard library's values
// (io.EOF, wire.ErrLength), and the package's own errors.New sentinels.
func (s *screener) safeArgs(args []ast.Expr, dir string, imports map[string]string) bool {
	for _, a := range args {
		switch a := a.(type) {
		case *ast.BasicLit:
		case *ast.SelectorExpr:
			x, ok := a.X.(*ast.Ident)
			if !ok {
				return false
			}
			if _, isImport := imports[x.Name]; !isImport {
				return false
			}
		case *ast.Ident:
			if !s.sentinels[dir][a.Name] {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func callName(fun ast.Expr) string {
	switch f := fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		if x, ok := f.X.(*ast.Ident); ok {
			return x.Name + "." + f.Sel.Name
		}
	case *ast.IndexExpr: // generic instantiation
		return callName(f.X)
	}
	return ""
}

// isTypeExpr reports conversions to composite types: []byte(s), map…, chan…
func isTypeExpr(fun ast.Expr) bool {
	switch f := fun.(type) {
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.InterfaceType, *ast.StructType:
		return true
	case *ast.ParenExpr:
		return isTypeExpr(f.X)
	case *ast.StarExpr:
		return true
	}
	return false
}
