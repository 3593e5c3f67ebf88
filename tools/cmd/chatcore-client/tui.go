package main

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
)

// The terminal UI: the session's lines above, the original's prompt and the
// line being typed below. Commands run on their own goroutines (tea.Cmd),
// because a request waits for its answer and the UI must keep drawing.

// maxLines bounds what the UI keeps of the session's output.
const maxLines = 1000

type (
	lineMsg string   // a line the session printed
	quitMsg struct{} // /exit
)

type tui struct {
	s      *session
	lines  []string
	input  []rune
	height int
	start  string // the -connect command to run first, if any
}

func (m *tui) Init() tea.Cmd {
	if m.start == "" {
		return nil
	}
	return m.run(m.start)
}

// run runs one input line on the session, off the UI's goroutine.
func (m *tui) run(line string) tea.Cmd {
	return func() tea.Msg {
		if m.s.command(line) {
			return quitMsg{}
		}
		return nil
	}
}

func (m *tui) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.height = msg.Height
	case lineMsg:
		m.lines = append(m.lines, string(msg))
		if len(m.lines) > maxLines {
			m.lines = m.lines[len(m.lines)-maxLines:]
		}
	case quitMsg:
		return m, tea.Quit
	case tea.KeyMsg:
		switch msg.Type {
		case tea.KeyCtrlC, tea.KeyCtrlD:
			return m, tea.Quit
		case tea.KeyEnter:
			line := string(m.input)
			m.input = m.input[:0]
			if strings.HasPrefix(line, "/") {
				m.lines = append(m.lines, m.s.prompt()+line) // a command shows itself; a chat line comes back as [You]
			}
			return m, m.run(line)
		case tea.KeyBackspace:
			if len(m.input) > 0 {
				m.input = m.input[:len(m.input)-1]
			}
		case tea.KeySpace:
			m.input = append(m.input, ' ')
		case tea.KeyRunes:
			m.input = append(m.input, msg.Runes...)
		}
	}
	return m, nil
}

func (m *tui) View() string {
	rows := max(m.height-1, 1)
	shown := m.lines
	if len(shown) > rows {
		shown = shown[len(shown)-rows:]
	}
	var b strings.Builder
	for range rows - len(shown) {
		b.WriteString("\n")
	}
	for _, l := range shown {
		b.WriteString(l)
		b.WriteString("\n")
	}
	b.WriteString(m.s.prompt())
	b.WriteString(string(m.input))
	return b.String()
}

// runTUI runs the terminal UI until /exit or Ctrl-C.
func runTUI(connect string) error {
	m := &tui{}
	p := tea.NewProgram(m, tea.WithAltScreen())
	m.s = newSession(func(line string) { p.Send(lineMsg(line)) })
	defer m.s.close()
	if connect != "" {
		m.start = "/connect " + strings.Replace(connect, ":", " ", 1)
	}
	m.lines = []string{"chatcore client: /help for the commands, /exit or Ctrl-C to leave"}
	_, err := p.Run()
	return err
}
