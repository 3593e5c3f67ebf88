package ladderfix

import (
	"testing"

	"serverlab/tests/testkit"
)

// Impl is what the checks call of the chapter's code: in this process under
// go test, in the subject under the grader (impl_test.go, judge_test.go).
type Impl struct {
	Double     func(int) int
	Greet      func(string) (string, error)
	CountTwice func() int // a new Counter's second Add
}

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx1_1_Double(t *testing.T) {
	testkit.New(t, "1.1")
	if got := impl.Double(21); got != 42 {
		t.Errorf("Double(21) = %d, want 42", got)
	}
}

func TestEx1_2_Greet(t *testing.T) {
	testkit.New(t, "1.2")
	if got, err := impl.Greet("ann"); err != nil || got != "HELLO, ANN" {
		t.Errorf("Greet(%q) = %q, %v; want %q", "ann", got, err, "HELLO, ANN")
	}
}

func TestEx1_3_Together(t *testing.T) {
	testkit.New(t, "1.3")
	g, _ := impl.Greet("x")
	if got := impl.Double(len(g)); got != 16 {
		t.Errorf("Double(len(Greet(x))) = %d, want 16", got)
	}
}

func TestEx1_4_Count(t *testing.T) {
	testkit.New(t, "1.4")
	if got := impl.CountTwice(); got != 2 {
		t.Errorf("the second Add = %d, want 2", got)
	}
}
