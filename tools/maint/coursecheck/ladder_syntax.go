// The syntax the ladder works with: a file's top-level declarations and
// what they mention, and the imports a spliced file needs.

package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
)

// importsOf is every import either file has, by path, with its name ("" for
// the default one).
func importsOf(srcs ...[]byte) map[string]string {
	all := map[string]string{}
	for _, src := range srcs {
		f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			name := ""
			if im.Name != nil {
				name = im.Name.Name
			}
			if _, ok := all[p]; !ok {
				all[p] = name
			}
		}
	}
	return all
}

// fixImports replaces the file's imports with those of known it uses (by
// package name), then formats it. Blank and dot imports the file had stay.
func fixImports(src []byte, known map[string]string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return nil, fmt.Errorf("the assembled file does not parse: %w", err)
	}
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	var keep []string
	for p, name := range known {
		local := name
		if local == "" {
			local = importName(p)
		}
		if name == "_" || name == "." || used[local] {
			spec := strconv.Quote(p)
			if name != "" {
				spec = name + " " + spec
			}
			keep = append(keep, spec)
		}
	}
	slices.Sort(keep)
	// Cut the old import declarations, put one block after the package clause.
	var out bytes.Buffer
	pos := 0
	tf := fset.File(f.Pos())
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		out.Write(src[pos:tf.Offset(gd.Pos())])
		pos = tf.Offset(gd.End())
	}
	out.Write(src[pos:])
	body := out.Bytes()
	pkgEnd := tf.Offset(f.Name.End())
	var res bytes.Buffer
	res.Write(body[:pkgEnd])
	if len(keep) > 0 {
		res.WriteString("\n\nimport (\n\t" + strings.Join(keep, "\n\t") + "\n)\n")
	}
	res.Write(body[pkgEnd:])
	formatted, err := format.Source(res.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the assembled file does not format: %w", err)
	}
	return formatted, nil
}

// importName guesses a package's name from its path: the last element, or
// the one before a major version suffix (math/rand/v2 is rand).
func importName(p string) string {
	base := path.Base(p)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
		base = path.Base(path.Dir(p))
	}
	return strings.ReplaceAll(base, "-", "_")
}

// goFiles lists the non-test .go files of either directory (not below it).
func goFiles(dirs ...string) ([]string, error) {
	seen := map[string]bool{}
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			n := e.Name()
			if !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
				seen[n] = true
			}
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for n := range seen {
			if !yield(n) {
				return
			}
		}
	}), nil
}

// readDecls parses a file into its top-level declarations; a missing file
// is nil, nil.
func readDecls(file string) ([]byte, []topDecl, error) {
	src, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	decls, err := declsOf(file, src)
	return src, decls, err
}

// declsOf is the top-level declarations of a file's content (file names it
// in errors).
func declsOf(file string, src []byte) ([]topDecl, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	// Parsed again without comments, for the code alone: a given
	// declaration whose comments differ is still the same code.
	bareSet := token.NewFileSet()
	bare, err := parser.ParseFile(bareSet, file, src, 0)
	if err != nil {
		return nil, err
	}
	tf := fset.File(f.Pos())
	var decls []topDecl
	for i, d := range f.Decls {
		start := d.Pos()
		var doc *ast.CommentGroup
		switch d := d.(type) {
		case *ast.FuncDecl:
			doc = d.Doc
		case *ast.GenDecl:
			doc = d.Doc
		}
		if doc != nil {
			start = doc.Pos()
		}
		td := topDecl{start: tf.Offset(start), end: tf.Offset(d.End())}
		td.text = string(src[td.start:td.end])
		td.key, td.defines = declKey(d)
		var code bytes.Buffer
		if err := printer.Fprint(&code, bareSet, bare.Decls[i]); err == nil {
			td.code = code.String()
		}
		td.mentions = map[string]bool{}
		ast.Inspect(d, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				td.mentions[id.Name] = true
			}
			return true
		})
		for _, c := range f.Comments {
			if c.Pos() >= start && c.End() <= d.End() {
				for _, m := range todoMark.FindAllStringSubmatch(c.Text(), -1) {
					if !slices.Contains(td.todos, m[1]) {
						td.todos = append(td.todos, m[1])
					}
				}
			}
		}
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			td.isImport = true
		}
		decls = append(decls, td)
	}
	return decls, nil
}

// declKey names a declaration so that the starter's and the solution's can
// be matched, and lists the names it declares.
func declKey(d ast.Decl) (string, []string) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil || len(d.Recv.List) == 0 {
			return "func " + d.Name.Name, []string{d.Name.Name}
		}
		return "func (" + recvType(d.Recv.List[0].Type) + ") " + d.Name.Name, []string{d.Name.Name}
	case *ast.GenDecl:
		var names []string
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				names = append(names, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					names = append(names, n.Name)
				}
			case *ast.ImportSpec:
				names = append(names, s.Path.Value)
			}
		}
		return d.Tok.String() + " " + strings.Join(names, ","), names
	}
	return "?", nil
}

// recvType is a receiver's type name without pointer or type parameters.
func recvType(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}

func mentionsAny(d topDecl, names []string) bool {
	for _, n := range names {
		if n != "_" && d.mentions[n] {
			return true
		}
	}
	return false
}

// fileHeader returns a Go source up to the end of its package clause: its
// build constraints and package comment come with it.
func fileHeader(src []byte) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	end := fset.File(f.Pos()).Offset(f.Name.End())
	return append(slices.Clip(src[:end]), '\n'), nil
}
