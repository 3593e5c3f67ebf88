package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const patchOld = `package p

func A() int {
	return 1
}

func B() int {
	return 2
}

func C() int {
	return 3
}
`

func TestApplyPatch(t *testing.T) {
	tests := []struct {
		name, old, patch, want string
	}{
		{
			name: "one hunk, with the why line and git's headers",
			old:  patchOld,
			patch: `# B is off by one
diff --git a/p.go b/p.go
index 1111111..2222222 100644
--- a/p.go
+++ b/p.go
@@ -6,5 +6,5 @@
 
 func B() int {
-	return 2
+	return 3
 }
 
`,
			want: strings.Replace(patchOld, "return 2", "return 3", 1),
		},
		{
			name: "two hunks, the first one moved down two lines (as git apply allows)",
			old:  "// a\n// b\n" + patchOld,
			patch: `--- a/p.go	2026-01-01 00:00:00
+++ b/p.go	2026-01-01 00:00:00
@@ -3,3 +3,4 @@
 func A() int {
+	println()
 	return 1
 }
@@ -11,3 +12,3 @@
 func C() int {
-	return 3
+	return 4
 }
`,
			want: strings.NewReplacer("return 1", "println()\n\treturn 1", "return 3", "return 4").Replace("// a\n// b\n" + patchOld),
		},
		{
			name: "a new file",
			old:  "",
			patch: `--- /dev/null
+++ b/q.go
@@ -0,0 +1,2 @@
+package p
+// Q
`,
			want: "package p\n// Q\n",
		},
		{
			name: "a deleted file",
			old:  "package p\n",
			patch: `--- a/q.go
+++ /dev/null
@@ -1 +0,0 @@
-package p
`,
			want: "",
		},
		{
			name: "a final line without its newline, added and removed",
			old:  "a\nb",
			patch: `--- a/f.txt
+++ b/f.txt
@@ -1,2 +1,2 @@
 a
-b
\ No newline at end of file
+c
`,
			want: "a\nc\n",
		},
		{
			name:  "an empty context line whose space an editor stripped",
			old:   "x\n\ny\n",
			patch: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n x\n\n-y\n+z\n",
			want:  "x\n\nz\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fps, err := parsePatch(tt.patch)
			if err != nil || len(fps) != 1 {
				t.Fatalf("parsePatch = %d file patches, %v; want 1, nil", len(fps), err)
			}
			got, err := fps[0].apply(tt.old)
			if err != nil || got != tt.want {
				t.Fatalf("apply = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestApplyPatchFailsLoudly(t *testing.T) {
	tests := []struct {
		name, old, patch, err string
	}{
		{"stale context", patchOld, "--- a/p.go\n+++ b/p.go\n@@ -7,3 +7,3 @@\n func B() int {\n-\treturn 20\n+\treturn 3\n }\n",
			"does not match the file: the patch is stale"},
		{"hunk longer than its header", patchOld, "--- a/p.go\n+++ b/p.go\n@@ -7,2 +7,2 @@\n func B() int {\n-\treturn 2\n+\treturn 3\n }\n",
			"unexpected"},
		{"hunk shorter than its header", patchOld, "--- a/p.go\n+++ b/p.go\n@@ -7,4 +7,4 @@\n func B() int {\n-\treturn 2\n+\treturn 3\n }\n",
			"ends early"},
		{"no a/ prefix", patchOld, "--- p.go\n+++ b/p.go\n@@ -7 +7 @@\n-func B() int {\n+func B() uint {\n",
			"lacks the a/ prefix"},
		{"a path out of the folder", patchOld, "--- a/../x.go\n+++ b/../x.go\n@@ -7 +7 @@\n-func B() int {\n+func B() uint {\n",
			"leaves the folder"},
		{"not a diff at all", patchOld, "# only a comment\n", "not a unified diff"},
		{"a rename", patchOld, "--- a/p.go\n+++ b/q.go\n@@ -7 +7 @@\n-func B() int {\n+func B() uint {\n", "renames"},
		{"creating a file that exists", patchOld, "--- /dev/null\n+++ b/p.go\n@@ -0,0 +1 @@\n+package p\n", "exists"},
		{"a final newline the file does not lack", "a\nb\n", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n",
			"final newline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fps, err := parsePatch(tt.patch)
			if err == nil {
				_, err = fps[0].apply(tt.old)
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want one saying %q", err, tt.err)
			}
		})
	}
}

// TestApplyPatchMatchesDiff applies what diff -u makes of random edits of a
// file (lines changed, removed, added, at the ends too) and requires the
// edited file back.
func TestApplyPatchMatchesDiff(t *testing.T) {
	diff, err := exec.LookPath("diff")
	if err != nil {
		t.Skip("no diff command here")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for i := range 40 {
		oldLines := make([]string, 5+rng.IntN(40))
		for j := range oldLines {
			oldLines[j] = fmt.Sprintf("line %d", j)
		}
		var newLines []string
		for j, l := range oldLines {
			switch rng.IntN(8) {
			case 0: // removed
			case 1:
				newLines = append(newLines, l+" changed")
			case 2:
				newLines = append(newLines, l, fmt.Sprintf("added after %d", j))
			default:
				newLines = append(newLines, l)
			}
		}
		if rng.IntN(3) == 0 {
			newLines = append([]string{"added at the top"}, newLines...)
		}
		oldText, newText := strings.Join(oldLines, "\n")+"\n", strings.Join(newLines, "\n")+"\n"
		if rng.IntN(4) == 0 {
			newText = strings.TrimSuffix(newText, "\n")
		}
		oldFile, newFile := filepath.Join(dir, "old"), filepath.Join(dir, "new")
		if err := errors.Join(os.WriteFile(oldFile, []byte(oldText), 0o644), os.WriteFile(newFile, []byte(newText), 0o644)); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(diff, "-u", "--label", "a/f.go", "--label", "b/f.go", oldFile, newFile).Output()
		if len(out) == 0 {
			continue // no change drawn
		}
		fps, err := parsePatch("# why\n" + string(out))
		if err != nil {
			t.Fatalf("case %d: parsePatch: %v\n%s", i, err, out)
		}
		if got, err := fps[0].apply(oldText); err != nil || got != newText {
			t.Fatalf("case %d: apply = %q, %v; want %q\npatch:\n%s", i, got, err, newText, out)
		}
	}
}
