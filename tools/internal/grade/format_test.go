package grade

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"slices"
	"strings"
	"testing"
	"time"
)

// sampleReport is a graded course in miniature: a chapter with a pass, a
// failure and a panic, and a chapter that does not build.
func sampleReport() *Report {
	rep := &Report{
		Target:   "chapters",
		Duration: Seconds(42 * time.Second),
		Chapters: []ChapterResult{
			{
				ID: "01", Title: "Iterative discovery server", Dir: "chapters/01", Package: "serverlab/chapters/01",
				Duration: Seconds(12 * time.Second),
				Exercises: []ExerciseResult{
					{ID: "1.1", Title: "Read one frame", Test: "TestEx1_1_ReadFrame", Pattern: "Ex1_1_",
						File: "chapters/01/frame_test.go", Line: 9,
						Points: 15, Max: 15, Passed: true, Duration: Seconds(20 * time.Millisecond)},
					{ID: "1.2", Title: "Write one frame", Test: "TestEx1_2_WriteFrame", Pattern: "Ex1_2_",
						Max: 15, Cause: CauseFailed, Duration: Seconds(10 * time.Millisecond),
						Message: "frame_test.go:40: WriteFrame: ex 1.2: not implemented\nsent \"hi\", want 00 02 68 69, got nothing"},
					{ID: "1.3", Title: "User store", Test: "TestEx1_3_UserStore", Pattern: "Ex1_3_",
						Max: 20, Cause: CausePanic, Duration: Seconds(30 * time.Millisecond),
						Message: "panic: assignment to entry in nil map\nserverlab/chapters/01.(*Store).Register(...)"},
				},
			},
			{
				ID: "02", Title: "Goroutine per connection", Dir: "chapters/02", Package: "serverlab/chapters/02",
				BuildError: "chapters/02/server.go:3:1: syntax error",
				Exercises: []ExerciseResult{
					{ID: "2.1", Title: "Accept loop", Test: "TestEx2_1_Accept", Pattern: "Ex2_1_",
						Max: 25, Cause: CauseBuildError, Message: "chapters/02/server.go:3:1: syntax error"},
				},
			},
		},
	}
	rep.total()
	return rep
}

func TestReportTotals(t *testing.T) {
	rep := sampleReport()
	if rep.Points != 15 || rep.Max != 75 {
		t.Errorf("total = %d/%d, want 15/75", rep.Points, rep.Max)
	}
	if ch := rep.Chapters[0]; ch.Points != 15 || ch.Max != 50 {
		t.Errorf("chapter 01 = %d/%d, want 15/50", ch.Points, ch.Max)
	}
	if ch := rep.Chapters[1]; ch.Points != 0 || ch.Max != 25 {
		t.Errorf("chapter 02 = %d/%d, want 0/25: the maximum is known without a build", ch.Points, ch.Max)
	}
}

func render(t *testing.T, format string, rep *Report) []byte {
	t.Helper()
	write, err := LookupFormat(format)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := write(&buf, rep); err != nil {
		t.Fatalf("write %s: %v", format, err)
	}
	return buf.Bytes()
}

func TestFormatJSONRoundTrips(t *testing.T) {
	rep := sampleReport()
	var got Report
	if err := json.Unmarshal(render(t, "json", rep), &got); err != nil {
		t.Fatalf("json output does not parse: %v", err)
	}
	if got.Points != rep.Points || got.Max != rep.Max || got.Target != rep.Target || len(got.Chapters) != 2 {
		t.Fatalf("json totals = %d/%d %q, %d chapters; want %d/%d %q, 2", got.Points, got.Max, got.Target, len(got.Chapters), rep.Points, rep.Max, rep.Target)
	}
	for i, ch := range rep.Chapters {
		for k, want := range ch.Exercises {
			if g := got.Chapters[i].Exercises[k]; g != want {
				t.Errorf("exercise %s after a round trip = %+v, want %+v", want.ID, g, want)
			}
		}
	}
	if got.Chapters[1].BuildError == "" {
		t.Error("json lost chapter 02's build error")
	}
}

func TestFormatGradescope(t *testing.T) {
	var top map[string]any
	if err := json.Unmarshal(render(t, "gradescope", sampleReport()), &top); err != nil {
		t.Fatalf("gradescope output does not parse: %v", err)
	}
	if _, ok := top["max_score"]; ok {
		t.Errorf("results.json has a top-level max_score, which Gradescope's spec does not define")
	}
	var got struct {
		Score         *float64 `json:"score"`
		ExecutionTime int      `json:"execution_time"`
		Tests         []struct {
			Name       string   `json:"name"`
			Score      *float64 `json:"score"`
			MaxScore   float64  `json:"max_score"`
			Status     string   `json:"status"`
			Output     string   `json:"output"`
			Visibility string   `json:"visibility"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(render(t, "gradescope", sampleReport()), &got); err != nil {
		t.Fatalf("gradescope output does not parse: %v", err)
	}
	if got.Score == nil || *got.Score != 15 || got.ExecutionTime != 42 {
		t.Errorf("top level = score %v, time %d; want 15, 42", got.Score, got.ExecutionTime)
	}
	if len(got.Tests) != 4 {
		t.Fatalf("%d tests, want 4 (one per exercise)", len(got.Tests))
	}
	first, panicked, broken := got.Tests[0], got.Tests[2], got.Tests[3]
	if first.Name != "01 · 1.1 Read one frame" || first.Status != "passed" || *first.Score != 15 || first.MaxScore != 15 || first.Visibility != "visible" {
		t.Errorf("passed exercise = %+v", first)
	}
	if panicked.Status != "failed" || *panicked.Score != 0 || panicked.MaxScore != 20 ||
		!strings.HasPrefix(panicked.Output, "panic:\npanic: assignment to entry in nil map") ||
		!strings.Contains(panicked.Output, "go test -race ./chapters/01/... -run Ex1_3_") {
		t.Errorf("panicked exercise = %+v; want status failed, 0/20, output starting with the cause and naming the rerun command", panicked)
	}
	if broken.Name != "02 · 2.1 Accept loop" || !strings.HasPrefix(broken.Output, "build error:\nchapters/02/server.go") {
		t.Errorf("unbuilt exercise = %+v", broken)
	}
}

func TestFormatClassroom(t *testing.T) {
	var got struct {
		Version  int    `json:"version"`
		Status   string `json:"status"`
		MaxScore int    `json:"max_score"`
		Tests    []struct {
			Name     string `json:"name"`
			Status   string `json:"status"`
			Score    int    `json:"score"`
			Message  string `json:"message"`
			TestCode string `json:"test_code"`
			Filename string `json:"filename"`
			LineNo   int    `json:"line_no"`
			Duration int    `json:"duration"`
		} `json:"tests"`
	}
	if err := json.Unmarshal(render(t, "classroom", sampleReport()), &got); err != nil {
		t.Fatalf("classroom output does not parse: %v", err)
	}
	if got.Version != 1 || got.Status != "fail" || got.MaxScore != 75 || len(got.Tests) != 4 {
		t.Fatalf("top level = version %d, status %q, max %d, %d tests; want 1, fail, 75, 4", got.Version, got.Status, got.MaxScore, len(got.Tests))
	}
	wantStatus := []string{"pass", "fail", "fail", "error"}
	for i, tc := range got.Tests {
		if tc.Status != wantStatus[i] {
			t.Errorf("test %q status = %q, want %q", tc.Name, tc.Status, wantStatus[i])
		}
	}
	if p := got.Tests[0]; p.Score != 15 || p.Filename != "chapters/01/frame_test.go" || p.LineNo != 9 || p.Duration != 20 {
		t.Errorf("passed test = %+v; want score 15, its file and line, 20 ms", p)
	}
	if f := got.Tests[1]; f.Score != 0 || !strings.HasPrefix(f.Message, "failed:\nframe_test.go:40") || f.TestCode != "go test -race ./chapters/01/... -run Ex1_2_" {
		t.Errorf("failed test = %+v", f)
	}

	allPass := sampleReport()
	allPass.Chapters = allPass.Chapters[:1]
	allPass.Chapters[0].Exercises = allPass.Chapters[0].Exercises[:1]
	if err := json.Unmarshal(render(t, "classroom", allPass), &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != "pass" {
		t.Errorf("status with every exercise passed = %q, want pass", got.Status)
	}
}

func TestFormatJUnit(t *testing.T) {
	var got struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Errors   int      `xml:"errors,attr"`
		Suites   []struct {
			Name      string `xml:"name,attr"`
			Tests     int    `xml:"tests,attr"`
			Failures  int    `xml:"failures,attr"`
			Errors    int    `xml:"errors,attr"`
			Skipped   int    `xml:"skipped,attr"`
			Timestamp string `xml:"timestamp,attr"`
			Hostname  string `xml:"hostname,attr"`
			Props     []struct {
				Name  string `xml:"name,attr"`
				Value string `xml:"value,attr"`
			} `xml:"properties>property"`
			Cases []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Time      string `xml:"time,attr"`
				Failure   *struct {
					Type    string `xml:"type,attr"`
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Type string `xml:"type,attr"`
				} `xml:"error"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	rep := sampleReport()
	rep.Started = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	rep.Chapters[0].Exercises = append(rep.Chapters[0].Exercises, ExerciseResult{ID: "1.4", Title: "Serve", Test: "TestEx1_4_Serve",
		Max: 10, Cause: CauseNotRun, Message: "the grading budget ran out"})
	rep.total()
	out := render(t, "junit", rep)
	if !bytes.HasPrefix(out, []byte("<?xml")) {
		t.Errorf("junit output does not start with an XML declaration: %.40q", out)
	}
	checkJUnitSchema(t, out)
	if err := xml.Unmarshal(out, &got); err != nil {
		t.Fatalf("junit output does not parse: %v\n%s", err, out)
	}
	if got.Tests != 5 || got.Failures != 2 || got.Errors != 1 || len(got.Suites) != 2 {
		t.Fatalf("testsuites: %d tests, %d failures, %d errors, %d suites; want 5, 2, 1, 2", got.Tests, got.Failures, got.Errors, len(got.Suites))
	}
	one := got.Suites[0]
	if one.Name != "01 Iterative discovery server" || one.Tests != 4 || one.Failures != 2 || one.Skipped != 1 || len(one.Cases) != 4 {
		t.Errorf("suite 01 = %q, %d tests, %d failures, %d skipped, %d cases; want 4, 2, 1, 4", one.Name, one.Tests, one.Failures, one.Skipped, len(one.Cases))
	}
	if one.Timestamp != "2026-03-04T05:06:07" || one.Hostname == "" {
		t.Errorf("suite 01 timestamp %q, hostname %q; want 2026-03-04T05:06:07 and this host", one.Timestamp, one.Hostname)
	}
	if len(one.Props) < 3 || one.Props[0].Value != "15" || one.Props[1].Value != "60" || one.Props[2].Name != "1.1 points" || one.Props[2].Value != "15/15" {
		t.Errorf("suite 01 properties = %+v, want points 15, max_points 60, then per exercise", one.Props)
	}
	if c := one.Cases[0]; c.Failure != nil || c.Error != nil || c.Skipped != nil || c.Classname != "serverlab/chapters/01" || c.Time != "0.020" {
		t.Errorf("passed case = %+v", c)
	}
	f := one.Cases[1].Failure
	if f == nil || f.Type != "failed" || f.Message != "frame_test.go:40: WriteFrame: ex 1.2: not implemented" || !strings.Contains(f.Text, `sent "hi"`) {
		t.Errorf("failed case's failure = %+v; want type failed, the first line as message, all of it as text", f)
	}
	if s := one.Cases[3].Skipped; s == nil || s.Message != "the grading budget ran out" {
		t.Errorf("not-run case's skipped = %+v, want the reason", s)
	}
	if c := got.Suites[1].Cases[0]; c.Error == nil || c.Error.Type != "build error" || c.Failure != nil {
		t.Errorf("unbuilt case = %+v, want an <error> of type \"build error\"", c)
	}
}

// junit10 is the structure of the common junit-10 schema (Jenkins'
// junit-10.xsd): for each element, the attributes and child elements it may
// have, children in this order.
var junit10 = map[string]struct{ attrs, children []string }{
	"testsuites": {[]string{"name", "time", "tests", "failures", "disabled", "errors"}, []string{"testsuite"}},
	"testsuite": {[]string{"name", "tests", "failures", "errors", "time", "disabled", "skipped", "timestamp", "hostname", "id", "package", "file", "log", "url", "version", "group"},
		[]string{"properties", "testcase", "system-out", "system-err"}},
	"properties": {nil, []string{"property"}},
	"property":   {[]string{"name", "value"}, nil},
	"testcase":   {[]string{"name", "assertions", "time", "classname", "status", "group"}, []string{"skipped", "error", "failure", "system-out", "system-err"}},
	"skipped":    {[]string{"message"}, nil},
	"error":      {[]string{"message", "type"}, nil},
	"failure":    {[]string{"message", "type"}, nil},
	"system-out": {nil, nil},
	"system-err": {nil, nil},
}

// checkJUnitSchema walks the document and reports every element, attribute
// or child order junit-10 does not allow.
func checkJUnitSchema(t *testing.T, doc []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(doc))
	type frame struct {
		name string
		last int // index in children of the last child seen
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch el := tok.(type) {
		case xml.StartElement:
			name := el.Name.Local
			spec, ok := junit10[name]
			if !ok {
				t.Errorf("element <%s> is not in junit-10", name)
				continue
			}
			if len(stack) == 0 && name != "testsuites" {
				t.Errorf("root element <%s>, want <testsuites>", name)
			}
			if len(stack) > 0 {
				parent := &stack[len(stack)-1]
				i := slices.Index(junit10[parent.name].children, name)
				switch {
				case i < 0:
					t.Errorf("<%s> may not contain <%s>", parent.name, name)
				case i < parent.last:
					t.Errorf("<%s> has <%s> after a later element of its sequence", parent.name, name)
				default:
					parent.last = i
				}
			}
			for _, a := range el.Attr {
				if !slices.Contains(spec.attrs, a.Name.Local) {
					t.Errorf("<%s> has attribute %s, which junit-10 does not define", name, a.Name.Local)
				}
			}
			if name == "testsuite" || name == "testcase" || name == "property" {
				for _, req := range map[string][]string{"testsuite": {"name", "tests"}, "testcase": {"name"}, "property": {"name", "value"}}[name] {
					if !slices.ContainsFunc(el.Attr, func(a xml.Attr) bool { return a.Name.Local == req }) {
						t.Errorf("<%s> lacks the required attribute %s", name, req)
					}
				}
			}
			stack = append(stack, frame{name: name})
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
}

func TestFormatText(t *testing.T) {
	text := string(render(t, "text", sampleReport()))
	for _, want := range []string{
		"Chapter 01 · Iterative discovery server (chapters/01)",
		"  1.1  Read one frame   15/15  passed",
		"  1.2  Write one frame   0/15  failed",
		"       frame_test.go:40: WriteFrame: ex 1.2: not implemented\n",
		"  1.3  User store        0/20  panic",
		"       subtotal         15/50\n",
		"Chapter 02 · Goroutine per connection (chapters/02)\n  does not build, so no exercise can pass:\n    chapters/02/server.go:3:1: syntax error\n",
		"  2.1  Accept loop  0/25  build error\n",
		"Total: 15/75 points (chapters, 42.0s)",
		"go test -race ./chapters/01/... -run Ex1_2_ -v",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "syntax error") != 1 {
		t.Errorf("the build error should be shown once, under its chapter:\n%s", text)
	}
	if strings.Contains(text, "To begin") {
		t.Errorf("the how-to-begin hint is for untouched checkouts only:\n%s", text)
	}
}

func TestFormatTextHintForUntouchedStarters(t *testing.T) {
	rep := sampleReport()
	rep.Chapters = rep.Chapters[:1]
	for i := range rep.Chapters[0].Exercises {
		ex := &rep.Chapters[0].Exercises[i]
		ex.Passed, ex.Points, ex.Cause, ex.Message = false, 0, CauseFailed, "not implemented"
	}
	rep.total()
	text := string(render(t, "text", rep))
	for _, want := range []string{"read chapters/01/README.md", "TODO(ex 1.1)", "go test ./chapters/01/... -run Ex1_1_"} {
		if !strings.Contains(text, want) {
			t.Errorf("untouched-starter report lacks %q:\n%s", want, text)
		}
	}
}

func TestLookupFormatRejectsUnknown(t *testing.T) {
	if _, err := LookupFormat("xml"); err == nil || !strings.Contains(err.Error(), "classroom|gradescope|json|junit|text") {
		t.Errorf("lookupFormat(\"xml\") = %v, want an error listing the formats", err)
	}
}

func TestRequire(t *testing.T) {
	mixed := sampleReport()

	allPassed := sampleReport()
	allPassed.Chapters = allPassed.Chapters[:1]
	allPassed.Chapters[0].Exercises = allPassed.Chapters[0].Exercises[:1]

	allFailed := sampleReport()
	allFailed.Chapters = allFailed.Chapters[:1]
	allFailed.Chapters[0].Exercises = allFailed.Chapters[0].Exercises[1:2]

	tests := []struct {
		name, mode string
		rep        *Report
		want       string // "" for no error, else a substring of it
	}{
		{"no requirement", "", mixed, ""},
		{"all, met", "all", allPassed, ""},
		{"all, not met", "all", mixed, "3 exercise(s) did not pass: 1.2 (failed), 1.3 (panic), 2.1 (build error)"},
		// Why, last on the output, where a CI log's tail shows it.
		{"all, not met: why", "all", mixed, "\n  1.2: frame_test.go:40: WriteFrame: ex 1.2: not implemented\n  sent \"hi\""},
		{"none, met", "none", allFailed, ""},
		{"none, not met", "none", mixed, "but 3 did not: 1.1 (passed), 1.3 (panic), 2.1 (build error)"},
		{"unknown mode", "some", mixed, "unknown -require mode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.rep.Require(tt.mode)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Require(%q) = %v, want nil", tt.mode, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Require(%q) = %v, want an error containing %q", tt.mode, err, tt.want)
			}
		})
	}
}

// A chapter the student has not started is one line in a report of several:
// an untouched clone's grade fits a screen.
func TestFormatTextCollapsesChaptersNotStarted(t *testing.T) {
	rep := sampleReport()
	untouched := ChapterResult{ID: "03", Title: "Worker pool", Dir: "chapters/03", Package: "serverlab/chapters/03"}
	for _, id := range []string{"3.1", "3.2", "3.3"} {
		untouched.Exercises = append(untouched.Exercises, ExerciseResult{ID: id, Title: "x", Max: 10,
			Cause: CauseFailed, Message: "ex " + id + ": not implemented\nmore\nmore"})
	}
	rep.Chapters = append(rep.Chapters, untouched, untouched)
	rep.Chapters[3].ID, rep.Chapters[3].Dir = "04", "chapters/04"
	rep.total()
	text := string(render(t, "text", rep))
	for _, want := range []string{
		"Chapter 03 · Worker pool  0/30  not started — chapters/03/README.md\nChapter 04 · Worker pool  0/30",
		"  1.2  Write one frame   0/15  failed", // started: in full
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "3.1") {
		t.Errorf("a chapter not started should not list its exercises:\n%s", text)
	}
}
