// Package platform_test checks the graders' platform scripts (Gradescope,
// GitHub Classroom). It is a package of its own, so that its tests run in a
// process of their own beside tools/cmd/grade's: the scripts it starts are
// its children, which an in-process grading would sweep as orphans.
package platform_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestGradescopeAutograder runs platform/gradescope's setup.sh (without
// installing anything) and run_autograder against a fake /autograder root,
// as Gradescope would: the course in source/serverlab, the chapter in
// source/chapter, each submission unzipped into submission/. It grades
// chapter 01's solution zipped with a top-level folder and the untouched
// starter zipped without one, and checks results.json each time. As root
// with setpriv and the user nobody, the students' code runs as nobody;
// otherwise that part is skipped (and logged).
func TestGradescopeAutograder(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and grades a chapter in a fresh copy of the course")
	}
	for _, tool := range []string{"bash", "find", "awk", "sort", "cp"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: the scripts need it", tool)
		}
	}
	if _, err := os.Stat("../../../../solutions/01"); err != nil {
		t.Skip("no solutions/ (a student release): nothing that passes to submit")
	}
	ag := t.TempDir()
	env := gradescopeEnv(t, ag)
	copyTree(t, "../../../..", filepath.Join(ag, "source", "serverlab"), func(rel string) bool {
		top, _, _ := strings.Cut(rel, "/")
		return top == "go.mod" || top == "go.sum" || top == "chapters" || top == "tests" || top == "tools"
	})
	writeFile(t, filepath.Join(ag, "source", "chapter"), "01\n")
	for _, s := range []string{"setup.sh", "run_autograder"} {
		b, err := os.ReadFile(filepath.Join("gradescope", s))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(ag, s), string(b))
		_ = os.Chmod(filepath.Join(ag, s), 0o755)
	}
	if out, err := runScript(ag, env, "setup.sh"); err != nil {
		t.Fatalf("setup.sh: %v\n%s", err, out)
	}

	// The solution, zipped with a top-level folder, with a tampered test file
	// (which must be ignored) and a file of the student's own that, from
	// ReadFrame, tries to forge results.json. It may not survive.
	sol := map[string]string{}
	addTree(t, sol, "../../../../solutions/01", "serverlab-main/chapters/01/")
	for name, src := range sol { // the solution's programs import it as the chapter: the student's are in chapters/01
		sol[name] = strings.ReplaceAll(src, `"serverlab/solutions/01"`, `"serverlab/chapters/01"`)
	}
	sol["serverlab-main/chapters/01/zz_extra.go"] = forger
	const codec = "serverlab-main/chapters/01/codec.go"
	sol[codec] = strings.Replace(sol[codec], "func ReadFrame(r io.Reader) (wire.Frame, error) {\n",
		"func ReadFrame(r io.Reader) (wire.Frame, error) {\n\tforge()\n", 1)
	sol["serverlab-main/chapters/01/discovery_test.go"] = "package discovery_test\n"
	res := submit(t, ag, env, sol)
	if res.Score != 100 || len(res.Tests) != 6 {
		t.Errorf("the solution scored %v with %d tests, want 100 with 6; results:\n%+v", res.Score, len(res.Tests), res)
	}
	if raw, _ := os.ReadFile(filepath.Join(ag, "results", "results.json")); strings.Contains(string(raw), "forged") {
		t.Errorf("the submission's code rewrote results.json:\n%s", raw)
	}

	// The starter, zipped without a top-level folder: 0, every exercise failed.
	starter := map[string]string{}
	addTree(t, starter, "../../../../chapters/01", "chapters/01/")
	res = submit(t, ag, env, starter)
	if res.Score != 0 || len(res.Tests) != 6 {
		t.Errorf("the starter scored %v with %d tests, want 0 with 6", res.Score, len(res.Tests))
	}
	for _, tc := range res.Tests {
		if tc.Status != "failed" || !strings.HasPrefix(tc.Output, "failed") {
			t.Errorf("starter test %q: status %q, output %.80q; want failed, cause failed", tc.Name, tc.Status, tc.Output)
		}
	}
	if _, err := os.Stat(filepath.Join(ag, "work", "serverlab", "chapters", "01", "zz_extra.go")); err == nil {
		t.Errorf("the first submission's zz_extra.go is still in the course copy: submissions leak into each other")
	}

	// A zip without the chapter still leaves a results.json that says why.
	res = submit(t, ag, env, map[string]string{"notes.txt": "oops"})
	if res.Score != 0 || !strings.Contains(res.Output, "no chapters/01 folder") {
		t.Errorf("an empty submission: score %v, output %q; want 0 and the reason", res.Score, res.Output)
	}
}

// forger is a student's file that tries to overwrite results.json when
// first called, with nothing the gate refuses (a detached writer would need
// os/exec or syscall, which chapter 01's allow-list refuses before anything
// is built: the gate's own tests hold that).
const forger = `package discovery

import (
	"os"
	"path/filepath"
	"sync"
)

var once sync.Once

func forge() {
	once.Do(func() {
		results := filepath.Join(os.Getenv("AUTOGRADER_ROOT"), "results", "results.json")
		_ = os.WriteFile(results, []byte("{\"score\": 100, \"output\": \"forged\"}"), 0o644)
	})
}
`

type gradescopeResult struct {
	Score  float64 `json:"score"`
	Output string  `json:"output"`
	Tests  []struct {
		Name   string  `json:"name"`
		Score  float64 `json:"score"`
		Status string  `json:"status"`
		Output string  `json:"output"`
	} `json:"tests"`
}

// gradescopeEnv is the scripts' environment: the fake root, this machine's
// Go caches (nothing to download), and the unprivileged user if possible.
// The grading budget is the script's own (9 minutes, inside Gradescope's
// default 10): a busy machine extends an exercise's time limit only when
// the budget can hold it, and a shorter budget here made chapter 01 time
// out beside 16 busy loops where a real autograder would have passed it.
func gradescopeEnv(t *testing.T, ag string) []string {
	env := []string{"AUTOGRADER_ROOT=" + ag, "SERVERLAB_SETUP_SKIP_INSTALL=1"}
	for _, v := range []string{"GOCACHE", "GOMODCACHE"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	_, setprivErr := exec.LookPath("setpriv")
	_, nobodyErr := exec.Command("id", "-u", "nobody").Output()
	if os.Geteuid() == 0 && setprivErr == nil && nobodyErr == nil {
		// nobody must be able to reach the course copy and the binaries.
		for d := ag; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()); d = filepath.Dir(d) {
			_ = os.Chmod(d, 0o755)
		}
		// Not killing every process of nobody's: on a shared machine they
		// are not all ours. The grader's own sweep still runs.
		env = append(env, "SERVERLAB_USER=nobody", "SERVERLAB_NO_KILL_ALL=1")
		t.Log("the students' code runs as nobody")
	} else {
		env = append(env, "SERVERLAB_USER=serverlab-no-such-user")
		t.Log("skipping the unprivileged user: needs root, setpriv and the user nobody")
	}
	return append(os.Environ(), env...)
}

// submit unzips files into a fresh submission/ folder, as Gradescope does,
// runs run_autograder and reads results.json.
func submit(t *testing.T, ag string, env []string, files map[string]string) gradescopeResult {
	t.Helper()
	sub := filepath.Join(ag, "submission")
	_ = os.RemoveAll(sub)
	_ = os.RemoveAll(filepath.Join(ag, "results"))
	unzip(t, zipOf(t, files), sub)
	if out, err := runScript(ag, env, "run_autograder"); err != nil {
		t.Fatalf("run_autograder: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(filepath.Join(ag, "results", "results.json"))
	if err != nil {
		t.Fatalf("no results.json: %v", err)
	}
	var res gradescopeResult
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("results.json does not parse: %v\n%s", err, raw)
	}
	return res
}

func runScript(ag string, env []string, name string) ([]byte, error) {
	cmd := exec.Command("bash", filepath.Join(ag, name))
	cmd.Env = env
	cmd.Dir = ag
	return cmd.CombinedOutput()
}

func zipOf(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(w, content)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func unzip(t *testing.T, b []byte, dst string) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		content, _ := io.ReadAll(r)
		r.Close()
		writeFile(t, filepath.Join(dst, filepath.FromSlash(f.Name)), string(content))
	}
}

// addTree adds the files under dir to files, named prefix + their path.
func addTree(t *testing.T, files map[string]string, dir, prefix string) {
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b, err := os.ReadFile(p)
		files[prefix+filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the files under src for which keep(rel) holds.
func copyTree(t *testing.T, src, dst string, keep func(rel string) bool) {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if !keep(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		writeFile(t, filepath.Join(dst, filepath.FromSlash(rel)), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestClassroomCopyStep runs the copy step of platform/classroom's workflow
// on a fake student repository and course checkout: the course keeps its
// test wiring, and the chapter's other files become exactly the student's.
func TestClassroomCopyStep(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	wf, err := os.ReadFile("classroom/classroom.yml")
	if err != nil {
		t.Fatal(err)
	}
	script := workflowStep(t, string(wf), "Copy only the student's chapter files")
	for _, want := range []string{"COURSE_REF:", "ref: ${{ env.COURSE_REF }}", "working-directory: course", "ADVISORY"} {
		if !strings.Contains(string(wf), want) {
			t.Errorf("the workflow lacks %q", want)
		}
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "student/chapters/03/server.go"), "student's")
	writeFile(t, filepath.Join(dir, "student/chapters/03/sub/extra.go"), "student's")
	writeFile(t, filepath.Join(dir, "student/chapters/03/jobserver_test.go"), "tampered")
	writeFile(t, filepath.Join(dir, "course/chapters/03/jobserver_test.go"), "course's")
	writeFile(t, filepath.Join(dir, "course/chapters/03/queue.go"), "starter: merged away by the student")
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CHAPTER=03")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the copy step: %v\n%s", err, out)
	}
	for rel, want := range map[string]string{
		"server.go": "student's", "sub/extra.go": "student's", "jobserver_test.go": "course's", "queue.go": "",
	} {
		b, err := os.ReadFile(filepath.Join(dir, "course/chapters/03", rel))
		if got := string(b); (err != nil && want != "") || got != want {
			t.Errorf("course/chapters/03/%s = %q (%v), want %q", rel, got, err, want)
		}
	}
}

// workflowStep returns the run: script of the step with the given name.
func workflowStep(t *testing.T, wf, name string) string {
	t.Helper()
	_, rest, ok := strings.Cut(wf, "- name: "+name+"\n")
	if !ok {
		t.Fatalf("the workflow has no step %q", name)
	}
	_, rest, ok = strings.Cut(rest, "run: |\n")
	if !ok {
		t.Fatalf("step %q has no run: | script", name)
	}
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "          ") {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, "          "))
	}
	return strings.Join(lines, "\n")
}
