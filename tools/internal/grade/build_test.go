package grade

import "testing"

// TestBuildFlagsPassOnlyTrimpath: the grader's builds take -trimpath from
// the caller (make test's shared cache) and no other flag of the caller's,
// such as a -overlay or -tags that would change what is built.
func TestBuildFlagsPassOnlyTrimpath(t *testing.T) {
	for _, tc := range []struct{ callers, want string }{
		{"", "-mod=mod"},
		{"-trimpath", "-mod=mod -trimpath"},
		{"-tags=judge -overlay=/tmp/x.json -trimpath -mod=vendor", "-mod=mod -trimpath"},
		{"-tags=judge -mod=vendor", "-mod=mod"},
		{"-trimpath=false", "-mod=mod"},
	} {
		if got := buildFlags(tc.callers); got != tc.want {
			t.Errorf("GOFLAGS=%q: the grader builds with %q, want %q", tc.callers, got, tc.want)
		}
	}
}
