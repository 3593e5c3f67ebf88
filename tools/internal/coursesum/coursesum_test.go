package coursesum

import "testing"

func TestIsCourseFile(t *testing.T) {
	for p, want := range map[string]bool{
		"go.mod": true, "go.sum": true, "tests/testkit/testkit.go": true, "tools/given/wire/wire.go": true,
		"chapters/01/discovery_test.go": true, "solutions/03/jobserver_test.go": true,
		"chapters/01/codec.go": false, "chapters/01/cmd/x/x_test.go": false, Path: false,
		"tools/cmd/grade/main.go": false, "tools/cmd/grade/testdata/chapters/01/fixture_test.go": true,
		"tools/cmd/grade/testdata/chapters/01/fixture.go": false, "tools/cmd/grade/testdata/rubric.json": false,
		"README.md": false, "docs/grading.md": false,
	} {
		if got := IsCourseFile(p); got != want {
			t.Errorf("IsCourseFile(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestBlobIDIsGits(t *testing.T) {
	// git hash-object of "hello\n", and the same with CRLF.
	const want = "ce013625030ba8dba906f756967f9e9ca394464a"
	for _, s := range []string{"hello\n", "hello\r\n"} {
		if got := BlobID([]byte(s)); got != want {
			t.Errorf("BlobID(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestFormatParses(t *testing.T) {
	files := map[string]string{"go.mod": BlobID([]byte("module serverlab\n")), "tests/x/x.go": BlobID([]byte("package x\n"))}
	text := Format(files)
	got := Parse(text)
	if len(got) != len(files) || got["go.mod"] != files["go.mod"] || got["tests/x/x.go"] != files["tests/x/x.go"] {
		t.Errorf("Parse(Format(%v)) = %v\n%s", files, got, text)
	}
	if want := files["go.mod"] + " go.mod\n" + files["tests/x/x.go"] + " tests/x/x.go\n"; text[len(text)-len(want):] != want {
		t.Errorf("Format does not list the files sorted by path, one per line:\n%s", text)
	}
}
