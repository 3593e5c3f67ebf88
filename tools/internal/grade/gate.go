package grade

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"serverlab/tools/internal/rubric"
)

// The gate: before anything of a chapter is built, the grader type-checks
// every Go file of the student's chapter tree (the package, cmd/, testdata/,
// every subfolder, whatever its build constraints) and refuses any reference
// to a package or package-level identifier the chapter's allow-list
// (gate_allow.go) does not name. References are resolved by go/types, not
// read as text: an aliased import, a type alias, a method value or a
// shadowed name is what it resolves to. A refusal costs the whole chapter
// (cause integrity), and nothing of the student's is compiled.
//
// The files the grader itself compiles (those its build constraints select
// on this machine) are checked exactly, as the compiler sees them; the
// others (another system's files, a tag no build here sets, test files of
// the student's subpackages) are checked together, leniently: a name they
// refer to is still resolved through its scope.

// gateTeach ends every refusal: why the grader refuses at all.
const gateTeach = "the grader refuses code that could reach the grader's machinery; see docs/grading.md#the-gate"

// forbidTeach ends a refusal of the rubric's forbid list: the given code
// named is what the exercise is to write, not a danger to the grader.
const forbidTeach = "the exercise is to write this yourself: the course's own version is what your code is checked against, so only the exercises it would do for you are lost; see docs/grading.md#the-gate"

// gateChapter runs the gate over the student's tree at chapterDir (relative
// to root, slash-separated) for chapter spec. replace is the build's overlay
// (absolute path → replacement, "" for deleted). goFlags are the build's
// -overlay and -modfile, for the export data of the allowed imports.
// allowed are the rules an instructor switched off (-allow, the rubric).
// The hits include screening's notes (screen.go), which cost nothing.
func gateChapter(ctx context.Context, root, module, chapterDir string, spec rubric.Chapter, allowed map[string]bool, replace map[string]string, goFlags []string) ([]Hit, error) {
	g := newGate(root, module, chapterDir, spec)
	if err := g.run(ctx, replace, goFlags); err != nil {
		return nil, err
	}
	var hits []Hit
	for _, h := range g.hits {
		if !allowed[h.Rule] {
			hits = append(hits, h)
		}
	}
	return hits, nil
}

func newGate(root, module, chapterDir string, spec rubric.Chapter) *gate {
	return &gate{
		root: root, module: module, chapterDir: chapterDir,
		chapter: spec, allow: allowSet(spec.ID), own: map[string]*types.Package{}, used: map[string]bool{},
		course: map[string][]*ast.File{}, coursePkgs: map[string]*types.Package{},
	}
}

// run collects, type-checks and screens the tree.
func (g *gate) run(ctx context.Context, replace map[string]string, goFlags []string) error {
	shared.Lock()
	defer shared.Unlock()
	shared.reset(g.root, goFlags)
	g.fset = shared.fset
	if err := g.collect(replace); err != nil {
		return err
	}
	if err := g.loadExports(ctx, goFlags, replace); err != nil {
		return err
	}
	g.check()
	return nil
}

// gate holds one chapter's files and what the gate found in them.
type gate struct {
	fset       *token.FileSet
	root       string
	module     string
	chapterDir string
	chapter    rubric.Chapter
	allow      map[string]bool
	files      []*srcFile
	hits       []Hit
	exports    map[string]string         // import path → export data file: what this tree may import
	own        map[string]*types.Package // the tree's own packages, checked from source
	loading    map[string]bool           // own packages being checked (import cycles)
	used       map[string]bool           // the allow-list's entries something referred to
	course     map[string][]*ast.File    // the course's given packages the tree imports, parsed
	coursePkgs map[string]*types.Package // and checked
	input      gateInput                 // what it read of the tree (gate_bounds.go)
	strLens    map[types.Object]int64    // the tree's string constants' lengths (gate_size.go)
	inits      map[token.Pos]ast.Expr    // its constants' declared expressions (gate_size.go)
	static     staticTotal               // the tree's static data so far (gate_size_total.go)
}

// srcFile is one Go file of the tree.
type srcFile struct {
	rel  string // relative to the module root, slash-separated
	dir  string // its folder, likewise
	f    *ast.File
	test bool // a _test.go file (of a subpackage: the chapter's own are the course's)
	host bool // the grader's build on this machine compiles it
	done bool // checked exactly
}

func (g *gate) refuse(rule, rel string, line int, why string) {
	g.hits = append(g.hits, Hit{Rule: rule, What: why, File: rel, Line: line, gate: true})
}

// collect reads the tree: every folder, every file, the overlay applied.
func (g *gate) collect(replace map[string]string) error {
	base := filepath.Join(g.root, filepath.FromSlash(g.chapterDir))
	if _, err := os.Stat(base); err != nil {
		return nil // the build reports a missing chapter
	}
	// The chapter's own folder, and chapters/ above it, must be folders of
	// this checkout: a link there grades someone else's files as these.
	dir := g.root
	for _, part := range strings.Split(g.chapterDir, "/") {
		dir = filepath.Join(dir, part)
		if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			rel, _ := filepath.Rel(g.root, dir)
			g.refuse(ruleImport, filepath.ToSlash(rel), 1, "a symbolic link ("+part+") puts another folder's files in the chapter's place")
			return nil
		}
	}
	err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(g.root, p)
		rel = filepath.ToSlash(rel)
		if d.Type()&fs.ModeSymlink != 0 {
			// The go command follows a link to a folder when it is imported
			// by path: what is behind it is not the student's to bring in.
			g.refuse(ruleImport, rel, 1, "a symbolic link ("+d.Name()+") brings in files from outside the chapter")
			return nil
		}
		if !d.IsDir() {
			g.file(p, rel, replace)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for abs, repl := range replace { // files the overlay adds
		if _, err := os.Lstat(abs); err == nil || repl == "" {
			continue
		}
		if rel, err := filepath.Rel(g.root, abs); err == nil && strings.HasPrefix(filepath.ToSlash(rel), g.chapterDir+"/") {
			g.file(abs, filepath.ToSlash(rel), replace)
		}
	}
	slices.SortFunc(g.files, func(a, b *srcFile) int { return strings.Compare(a.rel, b.rel) })
	return nil
}

// nonGoSources are the files that bring code the go command would compile
// or link besides Go: cgo's C and C++, assembly, prebuilt objects.
var nonGoSources = []string{".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".hxx", ".m", ".s", ".S", ".sx", ".f", ".F", ".for", ".f90", ".syso", ".swig", ".swigcxx"}

func (g *gate) file(p, rel string, replace map[string]string) {
	name, src := filepath.Base(p), p
	if repl, ok := replace[p]; ok {
		if repl == "" {
			return // the build leaves it out
		}
		src = repl
	}
	dir := path.Dir(rel)
	test := strings.HasSuffix(name, "_test.go")
	switch {
	case slices.Contains(nonGoSources, filepath.Ext(name)):
		g.refuse(ruleCgo, rel, 1, fmt.Sprintf("chapter %s is written in Go alone: %s is C, assembly or an object file for the linker", g.chapter.ID, name))
		return
	case !strings.HasSuffix(name, ".go"):
		return
	case test && dir == g.chapterDir:
		return // the chapter's wiring: the course's copy is built, and no other test file
	}
	text, err := readTreeFile(src)
	if isRefused(err) {
		g.refuse(ruleImport, rel, 1, fmt.Sprintf("%s: the gate reads only regular files of a bounded size, and checks what it reads: %s",
			name, err.(*errTreeFile).why))
		return
	}
	if err != nil {
		text = nil // go/parser reports the error reading the file again
	}
	if g.overInput(rel, len(text)) {
		return
	}
	f, err := parser.ParseFile(g.fset, src, text, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		// A file the gate cannot read is not let through unread: the
		// compiler accepts some that go/parser refuses (nesting deeper than
		// the parser's limit), and what it holds would never be checked.
		g.refuse(ruleImport, rel, 1, fmt.Sprintf("%s does not parse, so the gate cannot check it: fix it first (go vet ./chapters/%s/... shows where): %v", name, g.chapter.ID, firstLine(err)))
		return
	}
	g.files = append(g.files, &srcFile{rel: rel, dir: dir, f: f, test: test, host: !test && builds(p, src)})
}

// buildContext is the build the grader compiles the student's code for:
// this system, with cgo and the race detector.
var buildContext = func() build.Context {
	c := build.Default
	c.CgoEnabled = true
	c.BuildTags = append(c.BuildTags, "race")
	return c
}()

// builds reports whether the grader's build compiles the file named name
// whose content is at src (the overlay's replacement, or name itself): its
// build constraints and its name's _GOOS/_GOARCH suffix allow it.
func builds(name, src string) bool {
	c := buildContext
	c.OpenFile = func(string) (io.ReadCloser, error) { return openTreeReader(src) }
	ok, err := c.MatchFile(filepath.Dir(name), filepath.Base(name))
	return err != nil || ok
}

// loadExports lists the export data of every import the tree's files may
// have outside the module (what the allow-list permits), and of every import
// of the course's given packages they reach, with at most one go command:
// type-checking reads the compiled packages' types rather than their
// sources. It compiles the standard library and module dependencies, never
// the student's code. The given packages are checked from their source.
func (g *gate) loadExports(ctx context.Context, goFlags []string, replace map[string]string) error {
	want := map[string]bool{}
	var need func(ip string)
	need = func(ip string) {
		switch {
		case ip == "C" || ip == "unsafe" || g.ownPath(ip):
		case g.std(ip) || !strings.HasPrefix(ip, g.module+"/"):
			want[ip] = true
		case g.course[ip] == nil:
			files := g.parseCourse(ip, replace)
			g.course[ip] = files
			for _, f := range files {
				for _, im := range f.Imports {
					dep, _ := strconv.Unquote(im.Path.Value)
					need(dep)
				}
			}
		}
	}
	for _, sf := range g.files {
		for _, im := range sf.f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if g.packageAllowed(ip, sf.test) {
				need(ip)
			}
		}
	}
	exports, err := exportData(ctx, g.root, slices.Sorted(maps.Keys(want)))
	if err != nil {
		return err
	}
	g.exports = exports
	return nil
}

// parseCourse parses the non-test files of the course's package ip that the
// grader's build compiles (through the build's overlay: the course's
// copies). It returns a non-nil slice, empty if there are none.
func (g *gate) parseCourse(ip string, replace map[string]string) []*ast.File {
	files := []*ast.File{}
	dir := filepath.Join(g.root, filepath.FromSlash(strings.TrimPrefix(ip, g.module+"/")))
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		p, src := filepath.Join(dir, name), filepath.Join(dir, name)
		if repl, ok := replace[p]; ok {
			if repl == "" {
				continue
			}
			src = repl
		}
		if !builds(p, src) {
			continue
		}
		text, err := readTreeFile(src)
		if err != nil {
			continue
		}
		if f, err := parser.ParseFile(g.fset, src, text, parser.SkipObjectResolution); err == nil {
			files = append(files, f)
		}
	}
	return files
}

// coursePackage type-checks a given package of the course from its source.
func (g *gate) coursePackage(ip string) (*types.Package, error) {
	if p, ok := g.coursePkgs[ip]; ok {
		return p, nil
	}
	files := g.course[ip]
	if len(files) == 0 {
		return nil, fmt.Errorf("%q is not loaded", ip)
	}
	conf := types.Config{Importer: gateImporter{g}, Error: func(error) {}}
	pkg, _ := conf.Check(ip, g.fset, files, nil)
	g.coursePkgs[ip] = pkg
	return pkg, nil
}

// shared is what the gates of a process share, one at a time: the export
// data files listed so far and one importer reading them, so that the
// standard library is listed once and each package's types are read once,
// not once per chapter.
var shared sharedImports

type sharedImports struct {
	sync.Mutex
	key   string // the module root and -modfile they are for
	flags []string
	fset  *token.FileSet
	files map[string]string // import path → export data file; "" when it has none
	// execs are the listed packages that can start a program: os/exec or
	// plugin among their dependencies.
	execs map[string]bool
	// hidden are the listed packages (and their dependencies) that use a
	// package whose assembly writes memory unseen by the race detector:
	// the first such dependency (hidesWrites).
	hidden map[string]string
	imp    types.ImporterFrom
}

// reset makes shared hold what the build in root with goFlags sees. Only
// packages outside the module are listed: the overlay cannot change them,
// the go.mod can.
func (sh *sharedImports) reset(root string, goFlags []string) {
	key := root
	var flags []string
	for _, f := range goFlags {
		if strings.HasPrefix(f, "-modfile=") {
			key += "\x00" + f
			flags = append(flags, f)
		}
	}
	if sh.fset != nil && sh.key == key {
		return
	}
	sh.key, sh.flags, sh.fset, sh.files, sh.execs, sh.hidden = key, flags, token.NewFileSet(), map[string]string{}, map[string]bool{}, map[string]string{}
	sh.imp = importer.ForCompiler(sh.fset, "gc", func(ip string) (io.ReadCloser, error) {
		if f := sh.files[ip]; f != "" {
			return os.Open(f)
		}
		return nil, fmt.Errorf("no export data for %q", ip)
	}).(types.ImporterFrom)
}

// exportData returns the export data files of pkgs, listing those not yet
// known with `go list -export` with the build's go.mod and race detector
// (so that what it compiles is what the build would), in the module root.
func exportData(ctx context.Context, root string, pkgs []string) (map[string]string, error) {
	found := map[string]string{}
	var missing []string
	for _, p := range pkgs {
		if f, ok := shared.files[p]; ok {
			found[p] = f
		} else {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return found, nil
	}
	// -deps: every dependency's own dependencies too, so that the types an
	// allowed package hands out are known restricted or not (hidesWrites);
	// only the packages asked for are given export data (found).
	args := append([]string{"list", "-e", "-race", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{join .Deps \" \"}}\t{{join .Imports \" \"}}"}, shared.flags...)
	cmd := exec.CommandContext(ctx, "go", append(append(args, "--"), missing...)...)
	cmd.Dir = root
	cmd.Env = buildEnv()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := startTracked(cmd) // the grader's child: no sweep for orphans may take it for one
	if err == nil {
		err = waitTracked(cmd)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("the gate could not list the allowed packages' types (go list -export): %v\n%s", err, FirstLines(stderr.Bytes(), maxBuildLines))
	}
	asked := map[string]bool{}
	for _, p := range missing {
		asked[p] = true
	}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		ip, rest, _ := strings.Cut(sc.Text(), "\t")
		file, rest, _ := strings.Cut(rest, "\t")
		deps, imports, _ := strings.Cut(rest, "\t")
		if asked[ip] {
			found[ip] = file
			shared.execs[ip] = slices.ContainsFunc(strings.Fields(deps), startsPrograms)
		}
		if dep := hidesWrites(ip, strings.Fields(imports), strings.Fields(deps)); dep != "" {
			shared.hidden[ip] = dep
		}
	}
	for _, p := range missing {
		shared.files[p] = found[p]
	}
	return found, nil
}

// ownPath reports whether an import path names a package of the tree.
func (g *gate) ownPath(ip string) bool {
	ip, _, _ = strings.Cut(ip, "#") // a package checked apart from the build (see check)
	own := g.module + "/" + g.chapterDir
	return ip == own || strings.HasPrefix(ip, own+"/")
}

// check type-checks the tree: first every package as the grader's build
// compiles it, then every file it does not, with the rest of its folder.
func (g *gate) check() {
	for _, dir := range g.dirs() {
		_, _ = g.ownPackage(g.module + "/" + dir) // checks its files on the way; the build reports its errors
	}
	groups := map[string][]*srcFile{}
	var keys []string
	for _, sf := range g.files {
		if sf.done {
			continue
		}
		k := sf.dir + "\x00" + sf.f.Name.Name
		if groups[k] == nil {
			keys = append(keys, k)
			// The folder's other files of the same package give the
			// names it refers to.
			for _, o := range g.files {
				if o.done && o.dir == sf.dir && o.f.Name.Name == sf.f.Name.Name {
					groups[k] = append(groups[k], o)
				}
			}
		}
		groups[k] = append(groups[k], sf)
	}
	for _, k := range keys {
		dir, name, _ := strings.Cut(k, "\x00")
		g.typeCheck(g.module+"/"+dir+"#"+name, groups[k], false)
	}
}

func (g *gate) dirs() []string {
	var dirs []string
	for _, sf := range g.files {
		if sf.host && !slices.Contains(dirs, sf.dir) {
			dirs = append(dirs, sf.dir)
		}
	}
	return dirs
}

// ownPackage type-checks the tree's package at import path ip as the
// grader's build sees it (once), checking its files on the way.
func (g *gate) ownPackage(ip string) (*types.Package, error) {
	if p, ok := g.own[ip]; ok {
		return p, nil
	}
	if g.loading == nil {
		g.loading = map[string]bool{}
	}
	if g.loading[ip] {
		return nil, fmt.Errorf("import cycle through %s", ip)
	}
	g.loading[ip] = true
	defer delete(g.loading, ip)
	dir := strings.TrimPrefix(ip, g.module+"/")
	var files []*srcFile
	for _, sf := range g.files {
		if sf.host && sf.dir == dir {
			files = append(files, sf)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s has no Go files", dir)
	}
	pkg := g.typeCheck(ip, files, true)
	g.own[ip] = pkg
	return pkg, nil
}

// typeCheck checks files as one package, then the references of those not
// yet checked. exact is for the grader's build: its files are marked done.
func (g *gate) typeCheck(ip string, files []*srcFile, exact bool) *types.Package {
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
		Instances:  map[*ast.Ident]types.Instance{},
		Defs:       map[*ast.Ident]types.Object{}, // the constants' lengths (gate_size.go)
	}
	conf := types.Config{
		Importer:    gateImporter{g},
		Error:       func(error) {}, // the compiler reports real errors; the gate only resolves names
		FakeImportC: true,
	}
	var asts []*ast.File
	for _, sf := range files {
		asts = append(asts, sf.f)
	}
	pkg, _ := conf.Check(ip, g.fset, asts, info)
	if exact {
		g.practices(files, info) // practice.go
	}
	for _, sf := range files {
		if sf.done {
			continue
		}
		if exact {
			sf.done = true
		}
		g.references(sf, info)
		g.sizes(sf, info) // gate_size.go
	}
	if !exact {
		for _, sf := range files {
			sf.done = true
		}
	}
	return pkg
}

// gateImporter gives the type-checker the tree's own packages from source and
// every other allowed package from its export data. A package the
// allow-list refuses is never loaded: its import is refused, and the
// type-checker goes on without it.
type gateImporter struct{ g *gate }

func (i gateImporter) Import(ip string) (*types.Package, error) { return i.ImportFrom(ip, "", 0) }

func (i gateImporter) ImportFrom(ip, dir string, mode types.ImportMode) (*types.Package, error) {
	if ip == "unsafe" {
		return types.Unsafe, nil
	}
	if i.g.ownPath(ip) {
		return i.g.ownPackage(ip)
	}
	if _, ok := i.g.course[ip]; ok {
		return i.g.coursePackage(ip)
	}
	if _, ok := i.g.exports[ip]; !ok {
		return nil, fmt.Errorf("%q is not loaded", ip)
	}
	return shared.imp.ImportFrom(ip, dir, mode)
}

// allowedDirectives are the //go: comments that change nothing the grader
// relies on. Every other one (linkname, norace, nocheckptr, cgo_*, …)
// reaches past the compiler's or the race detector's rules.
var allowedDirectives = []string{"build", "generate", "embed", "noinline"}

// references checks what one file refers to.
func (g *gate) references(sf *srcFile, info *types.Info) {
	line := func(n ast.Node) int { return g.fset.PositionFor(n.Pos(), false).Line }
	for _, cg := range sf.f.Comments {
		for _, c := range cg.List {
			name, ok := strings.CutPrefix(c.Text, "//go:")
			if !ok {
				continue
			}
			name, _, _ = strings.Cut(name, " ")
			if name == "embed" && !g.allow["embed"] {
				g.refuseEmbed(sf, line(c)) // gate_embed.go
				continue
			}
			if !slices.Contains(allowedDirectives, name) {
				rule := ruleLinkname
				if strings.HasPrefix(name, "cgo_") {
					rule = ruleCgo
				}
				g.refuse(rule, sf.rel, line(c), fmt.Sprintf("chapter %s needs no //go:%s: the directive reaches past the compiler's and the race detector's checks", g.chapter.ID, name))
			}
		}
	}
	refused := map[string]bool{} // packages whose import is refused: once is enough
	for _, im := range sf.f.Imports {
		ip, _ := strconv.Unquote(im.Path.Value)
		switch {
		case ip == "C":
			g.refuse(ruleCgo, sf.rel, line(im), fmt.Sprintf("chapter %s is written in Go alone: import \"C\" runs a C compiler on the student's files", g.chapter.ID))
			refused[ip] = true
		case im.Name != nil && im.Name.Name == ".":
			g.refuse(ruleImport, sf.rel, line(im), fmt.Sprintf("dot import of %q: the gate wants every name's package in sight; import it by name", ip))
			refused[ip] = true
		case g.allow[ip]:
			g.used[ip] = true
		case g.std(ip) && shared.execs[ip] && !sf.test:
			// An ordinary package that can start a program (net/http/cgi
			// runs one per request) is as restricted as os/exec: a child
			// can be the graded process again, under other settings.
			g.refuse(ruleImport, sf.rel, line(im), fmt.Sprintf("chapter %s's code needs no %s: it can start programs (it uses os/exec), "+
				"and a program started from the graded process can re-execute it under other settings", g.chapter.ID, ip))
			refused[ip] = true
		case !g.ownPath(ip) && !g.packageAllowed(ip, sf.test):
			rule := ruleImport
			if ip == "unsafe" {
				rule = ruleUnsafe
			}
			g.refuse(rule, sf.rel, line(im), g.packageRefusal(ip))
			refused[ip] = true
		}
	}
	teach := g.teaches(sf)
	if teach {
		g.startup(sf, info)
	}
	refusedTypes := map[string]bool{} // restricted types already refused in this file
	ast.Inspect(sf.f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				if pn, ok := info.Uses[x].(*types.PkgName); ok {
					ip := pn.Imported().Path()
					if !refused[ip] {
						g.member(sf, line(n), ip, n.Sel.Name)
					}
					if teach {
						g.noteRef(sf, line(n), ip, x.Name+"."+n.Sel.Name)
					}
					return true
				}
			}
			if sel, ok := info.Selections[n]; ok {
				ip, typ := ownerOf(sel)
				if ip != "" && !refused[ip] && !g.ownPath(ip) {
					g.member(sf, line(n), ip, typ+"."+n.Sel.Name)
				}
				if ip != "" && g.ownPath(ip) && types.IsInterface(sel.Recv()) {
					g.ownInterfaceMethod(sf, line(n), n.Sel.Name)
				}
			}
			if obj := info.Uses[n.Sel]; obj != nil {
				g.handsOut(sf, line(n), obj)
			}
		case *ast.CallExpr:
			g.valueOfRefusedType(sf, line(n), info.Types[n], refusedTypes)
		case *ast.Ident:
			g.instance(sf, line(n), info, n, refusedTypes) // gate_generic.go
		case *ast.CompositeLit:
			g.literalKeys(sf, info, n, line(n), refused)
		case *ast.BasicLit:
			if teach {
				g.noteProc(sf, line(n), n)
			}
		}
		return true
	})
}

// ownInterfaceMethod checks a call through an interface the student
// declared: a method the never list refuses (net.UnixConn.WriteMsgUnix) is
// as refused when the value is reached through such an interface, since a
// *net.UnixConn satisfies it. Those methods' names are the course's: no
// ordinary interface has them.
func (g *gate) ownInterfaceMethod(sf *srcFile, line int, name string) {
	for entry, why := range never {
		parts := strings.Split(entry, ".")
		if len(parts) >= 3 && parts[len(parts)-1] == name && !g.allow[entry] {
			g.refuse(ruleImport, sf.rel, line, fmt.Sprintf("no chapter needs %s, here by an interface of the chapter's own: %s",
				path.Base(entry), why))
			return
		}
	}
}

// handsOut checks a function or method of another package by what it
// returns: one that hands out a value of a restricted package's type the
// chapter may not use ((*net.TCPConn).SyscallConn returns a
// syscall.RawConn) is as refused as that type, since an interface of the
// student's own could then call its methods unseen.
func (g *gate) handsOut(sf *srcFile, line int, obj types.Object) {
	fn, ok := obj.(*types.Func)
	if !ok || fn.Pkg() == nil || g.ownPath(fn.Pkg().Path()) {
		return
	}
	res := fn.Signature().Results()
	for i := range res.Len() {
		n := namedOf(res.At(i).Type())
		if n == nil || n.Obj().Pkg() == nil {
			continue
		}
		ip, name := n.Obj().Pkg().Path(), n.Obj().Name()
		why, ok := restrictedWhy(ip)
		if !ok || ip == fn.Pkg().Path() || g.typeAllowed(ip, name) {
			continue
		}
		g.refuse(ruleImport, sf.rel, line, fmt.Sprintf("chapter %s's code needs no %s: it hands out a %s.%s, and %s",
			g.chapter.ID, fn.FullName(), path.Base(ip), name, why))
		return
	}
}

// valueOfRefusedType checks what a call returns: a value of a restricted
// package's type the chapter may not use is refused however the call got
// it, a generic function's inferred type parameter included
// (func f[T any](c interface{ SyscallConn() (T, error) }) (T, error) makes
// a syscall.RawConn of a *net.TCPConn without naming it), since an
// interface of the student's own could then call its methods unseen.
// Constants are not values that reach anything (syscall.SIGKILL).
func (g *gate) valueOfRefusedType(sf *srcFile, line int, tv types.TypeAndValue, done map[string]bool) {
	if tv.Type == nil || tv.Value != nil || sf.test {
		return
	}
	ts := []types.Type{tv.Type}
	if tuple, ok := tv.Type.(*types.Tuple); ok {
		ts = ts[:0]
		for i := range tuple.Len() {
			ts = append(ts, tuple.At(i).Type())
		}
	}
	for _, t := range ts {
		n := namedOf(t)
		if n == nil || n.Obj().Pkg() == nil {
			continue
		}
		ip, name := n.Obj().Pkg().Path(), n.Obj().Name()
		why, ok := restrictedWhy(ip)
		if !ok || g.typeAllowed(ip, name) || done[ip+"."+name] {
			continue
		}
		done[ip+"."+name] = true
		g.refuse(ruleImport, sf.rel, line, fmt.Sprintf("chapter %s's code needs no %s.%s: a call here returns one, and %s",
			g.chapter.ID, path.Base(ip), name, why))
	}
}

// typeAllowed reports whether the chapter may hold a value of a restricted
// package's type: the type or one of its members is on its list. The entry
// that allows it counts as used (the *tls.Conn tls.Server returns is
// allowed by "crypto/tls.Conn" alone).
func (g *gate) typeAllowed(ip, name string) bool {
	for _, entry := range []string{ip, ip + "." + name} {
		if g.allow[entry] {
			g.used[entry] = true
			return true
		}
	}
	for entry := range g.allow {
		if strings.HasPrefix(entry, ip+"."+name+".") {
			return true
		}
	}
	return false
}

// literalKeys checks the fields a struct literal of another package's type
// sets, by name (syscall.SysProcAttr{Ptrace: true}) or by position.
func (g *gate) literalKeys(sf *srcFile, info *types.Info, lit *ast.CompositeLit, line int, refused map[string]bool) {
	tv, ok := info.Types[lit]
	if !ok {
		return
	}
	t := tv.Type
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	named, ok := types.Unalias(t).(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return
	}
	ip := named.Obj().Pkg().Path()
	if refused[ip] || g.ownPath(ip) {
		return
	}
	st, _ := named.Underlying().(*types.Struct)
	for i, e := range lit.Elts {
		if kv, ok := e.(*ast.KeyValueExpr); ok {
			if k, ok := kv.Key.(*ast.Ident); ok {
				if _, isField := info.Uses[k].(*types.Var); isField {
					g.member(sf, line, ip, named.Obj().Name()+"."+k.Name)
				}
			}
			continue
		}
		// An unkeyed literal sets its fields by position
		// (&syscall.SysProcAttr{"", nil, false, true} is Setsid: true): the
		// i-th element is the i-th field, refused as its keyed form is.
		if st != nil && i < st.NumFields() {
			g.member(sf, line, ip, named.Obj().Name()+"."+st.Field(i).Name())
		}
	}
}

// ownerOf names the type a selected field or method is declared in, and its
// package: ("os/exec", "Cmd") for cmd.ExtraFiles or (*exec.Cmd).Run.
func ownerOf(sel *types.Selection) (pkgPath, typeName string) {
	obj := sel.Obj()
	if obj.Pkg() == nil {
		return "", "" // a method of error, say
	}
	if fn, ok := obj.(*types.Func); ok {
		if recv := fn.Signature().Recv(); recv != nil {
			if n := namedOf(recv.Type()); n != nil {
				return obj.Pkg().Path(), n.Obj().Name()
			}
		}
	}
	// A field, or an interface's method: walk the embedding path to the
	// type that declares it.
	t := sel.Recv()
	idx := sel.Index()
	for _, i := range idx[:len(idx)-1] {
		st, ok := deref(t).Underlying().(*types.Struct)
		if !ok {
			break
		}
		t = st.Field(i).Type()
	}
	if n := namedOf(t); n != nil {
		return obj.Pkg().Path(), n.Obj().Name()
	}
	return obj.Pkg().Path(), "?"
}

func deref(t types.Type) types.Type {
	if p, ok := t.Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return t
}

func namedOf(t types.Type) *types.Named {
	n, _ := types.Unalias(deref(t)).(*types.Named)
	return n
}

// member checks one reference to a package's member: "Flock", "Cmd.Wait".
func (g *gate) member(sf *srcFile, line int, ip, name string) {
	if g.ownPath(ip) {
		return
	}
	for _, fb := range g.chapter.Screen.Forbid {
		if fb.Ref == ip+"."+name {
			why := fmt.Sprintf("%s.%s is the course's", path.Base(ip), name)
			if fb.Why != "" {
				why += ": " + fb.Why
			}
			g.hits = append(g.hits, Hit{Rule: ruleForbid, What: why, File: sf.rel, Line: line, Exercises: fb.Exercises, gate: true})
		}
	}
	if g.allow[ip+"."+name] {
		g.used[ip+"."+name] = true
		return
	}
	if why, ok := never[ip+"."+name]; ok {
		g.refuse(ruleImport, sf.rel, line, fmt.Sprintf("no chapter needs %s.%s: %s", path.Base(ip), name, why))
		return
	}
	if g.allow[ip] {
		g.used[ip] = true
		return
	}
	if !g.perMember(ip) {
		return
	}
	typ, _, isMember := strings.Cut(name, ".")
	for _, entry := range []string{ip + "." + name, ip + "." + typ + ".*"} {
		if g.allow[entry] && (isMember || !strings.HasSuffix(entry, ".*")) {
			g.used[entry] = true
			return
		}
	}
	if sf.test && slices.Contains(testFiles, ip) {
		return
	}
	g.refuse(ruleImport, sf.rel, line, fmt.Sprintf("chapter %s's code needs no %s.%s: %s", g.chapter.ID, path.Base(ip), name, g.packageWhy(ip)))
}

// startsPrograms reports whether a package, found among another's
// dependencies, lets that one start a program.
func startsPrograms(dep string) bool { return dep == "os/exec" || dep == "plugin" }

// perMember reports whether a package's members are allowed one by one:
// the restricted standard packages and everything outside the standard
// library (a package allowed whole returns before this is asked).
func (g *gate) perMember(ip string) bool {
	if _, ok := restrictedWhy(ip); ok {
		return true
	}
	return !g.std(ip)
}

// packageAllowed reports whether importing ip is allowed at all: ordinary,
// allowed whole, or with some member allowed.
func (g *gate) packageAllowed(ip string, test bool) bool {
	if test && slices.Contains(testFiles, ip) {
		return true
	}
	if g.allow[ip] || (g.std(ip) && !g.perMember(ip)) {
		return true
	}
	for entry := range g.allow {
		// A member is exported: "github.com/nats-io/nats.go" is a
		// package, not a member of "github.com/nats-io/nats".
		if member, ok := strings.CutPrefix(entry, ip+"."); ok && member != "" && unicode.IsUpper(rune(member[0])) {
			return true
		}
	}
	return false
}

func (g *gate) packageRefusal(ip string) string {
	switch {
	case strings.HasPrefix(ip, g.module+"/"):
		return fmt.Sprintf("chapter %s's code may not import %q: the tests, the solutions, the grader and the other chapters are not the student's code, "+
			"and of the given code the chapter uses only what its lesson gives", g.chapter.ID, ip)
	case g.std(ip):
		return fmt.Sprintf("chapter %s's code needs no %s: %s", g.chapter.ID, ip, g.packageWhy(ip))
	}
	return fmt.Sprintf("chapter %s's code needs no %q: the course's go.mod lists it for another chapter", g.chapter.ID, ip)
}

func (g *gate) packageWhy(ip string) string {
	if why, ok := restrictedWhy(ip); ok {
		return why
	}
	if !g.std(ip) {
		return "the chapter uses only what its lesson uses of it"
	}
	return "it is not part of this chapter"
}

// std reports whether an import path is the standard library's: its first
// element has no dot, and it is not the course's module (whose path,
// "serverlab", has none either).
func (g *gate) std(ip string) bool {
	first, _, _ := strings.Cut(ip, "/")
	return !strings.Contains(first, ".") && ip != g.module && !strings.HasPrefix(ip, g.module+"/") && ip != "C"
}

// allowSet is chapter id's allow-list as a set.
func allowSet(id string) map[string]bool {
	set := map[string]bool{}
	for _, e := range slices.Concat(everyChapter, chapterAllow[id]) {
		set[e] = true
	}
	return set
}

// firstLine is the first line of err's text.
func firstLine(err error) string {
	line, _, _ := strings.Cut(err.Error(), "\n")
	return line
}
