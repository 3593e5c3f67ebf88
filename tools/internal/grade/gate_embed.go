package grade

import "fmt"

// The build reads more than Go files where a //go:embed directive asks it:
// the files it names go whole into the compiled program and the grader's
// build cache, and the size rule (gate_size.go), which reads Go source, never
// sees them. A 600 MiB bloat.bin embedded in chapter 01 scored 100/100 and
// left a 629 MB cache entry (cheater6 A). No chapter embeds a file, so the
// directive is refused unless the chapter's allow-list has the package
// "embed", which a chapter that needs it would add (and then bound its
// files).

// refuseEmbed refuses the //go:embed directive at line of sf.
func (g *gate) refuseEmbed(sf *srcFile, line int) {
	g.refuse(ruleSize, sf.rel, line, fmt.Sprintf("chapter %s's code needs no //go:embed: the files it names go whole "+
		"into the compiled program and the grader's build cache, where the size limit on values does not see them; "+
		"read a file at run time (os.ReadFile) or write the data as Go", g.chapter.ID))
}
