package rooms

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

const module = "serverlab"

// listed holds imports' answers by tags: go list over the module takes
// seconds, and several tests read the same graph.
var listed sync.Map

// imports maps each package of the module (relative path) to the module's
// packages it imports, its tests included, built with tags. The map is
// shared: callers only read it.
func imports(t *testing.T, tags string) map[string]map[string]bool {
	t.Helper()
	if g, ok := listed.Load(tags); ok {
		return g.(map[string]map[string]bool)
	}
	cmd := exec.Command("go", "list", "-e", "-tags", tags,
		"-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}`,
		module+"/...")
	cmd.Dir = "../../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -tags %q: %v\n%s", tags, err, stderr.Bytes())
	}
	graph := map[string]map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		from, ok := relative(fields[0])
		if !ok {
			continue
		}
		if graph[from] == nil {
			graph[from] = map[string]bool{}
		}
		for _, ip := range fields[1:] {
			if to, ok := relative(ip); ok && to != from {
				graph[from][to] = true
			}
		}
	}
	listed.Store(tags, graph)
	return graph
}

func relative(ip string) (string, bool) {
	return strings.CutPrefix(ip, module+"/")
}

// TestImportsRunDown holds every import of the module, under every build tag
// the course uses, to the layout's rules (rooms.go).
func TestImportsRunDown(t *testing.T) {
	plain := imports(t, "")
	for _, tags := range []string{"", "judge", "solutions"} {
		for from, tos := range imports(t, tags) {
			if Of(from) == Other {
				t.Errorf("-tags %q: %s is in no room of the layout (tools/given, tools/internal, tools/cmd, tools/maint, tests, chapters, solutions)", tags, from)
				continue
			}
			for to := range tos {
				forSolutions := tags == "solutions" && !plain[from][to]
				if !Allowed(from, to, forSolutions) {
					t.Errorf("-tags %q: %s (room %s) imports %s (room %s): that arrow runs up or sideways; see the rules in tools/maint/rooms/rooms.go", tags, from, Of(from), to, Of(to))
				}
			}
		}
	}
}

// TestRulesCanFail checks the rules on arrows that must be refused, so that
// a rule switched off by mistake shows here.
func TestRulesCanFail(t *testing.T) {
	refused := [][2]string{
		{"chapters/07", "tools/internal/rubric"},
		{"chapters/07", "solutions/07"},
		{"chapters/07", "chapters/03"},
		{"tests/testkit", "chapters/01"},
		{"tests/testkit", "tools/cmd/grade"},
		{"tools/given/wire", "tests/testkit"},
		{"tools/given/wire", "tools/internal/load"},
		{"tools/internal/runner", "tools/cmd/bench"},
		{"tools/internal/runner", "tools/maint/soak"},
		{"tools/cmd/loadgen", "tools/maint/soak"},
		{"tools/cmd/loadgen", "tools/cmd/monitor"},
		{"tools/cmd/loadgen", "solutions/02"},
		{"tools/maint/soak", "tools/cmd/loadgen"},
		{"tools/other", "tools/given/wire"},
	}
	for _, a := range refused {
		if Allowed(a[0], a[1], false) {
			t.Errorf("Allowed(%s → %s) = true, want false", a[0], a[1])
		}
	}
	allowed := [][2]string{
		{"chapters/07", "tools/given/chatcore/proto"},
		{"chapters/07/cmd/chatcore-server", "chapters/07"},
		{"solutions/03", "tests/jobtest"},
		{"tools/cmd/bench", "tools/internal/runner"},
		{"tools/cmd/bench", "tools/cmd/bench/peers/epollrelay"},
		{"tools/maint/soak", "tools/internal/procs"},
	}
	for _, a := range allowed {
		if !Allowed(a[0], a[1], false) {
			t.Errorf("Allowed(%s → %s) = false, want true", a[0], a[1])
		}
	}
	if !Allowed("tools/cmd/loadgen", "solutions/02", true) {
		t.Error("a solution-backed test of tools/cmd/loadgen may import solutions/02")
	}
}
