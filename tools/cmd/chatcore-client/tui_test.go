package main

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

// TestTUIView: output lines above, the prompt and what is typed below, only
// the latest lines when there are more than fit.
func TestTUIView(t *testing.T) {
	m := &tui{s: newSession(func(string) {})}
	m.Update(tea.WindowSizeMsg{Width: 40, Height: 3})
	for _, l := range []string{"one", "two", "three"} {
		m.Update(lineMsg(l))
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("hi")})
	m.Update(tea.KeyMsg{Type: tea.KeySpace})
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("you")})
	m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
	want := "two\nthree\nchat> hi yo"
	if got := m.View(); got != want {
		t.Fatalf("View() = %q; want %q", got, want)
	}
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if cmd == nil || len(m.input) != 0 {
		t.Fatalf("Enter should hand the line to the session and clear the input")
	}
	if msg := cmd(); msg != nil { // not connected: the session prints an error, the UI goes on
		t.Fatalf("a chat line while not connected returned %v", msg)
	}
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/exit")})
	_, cmd = m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if _, ok := cmd().(quitMsg); !ok || !strings.HasSuffix(m.lines[len(m.lines)-1], "/exit") {
		t.Fatalf("/exit should quit, and show itself")
	}
}
