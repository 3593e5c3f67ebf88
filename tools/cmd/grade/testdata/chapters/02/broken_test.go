package broken

import "testing"

func TestEx2_1_One(t *testing.T) {
	if Answer() != 42 {
		t.Errorf("Answer() = %d, want 42", Answer())
	}
}

func TestEx2_2_Two(t *testing.T) {
	if Answer() == 0 {
		t.Error("Answer() = 0")
	}
}
