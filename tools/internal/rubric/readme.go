package rubric

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// readmeColumns are the exercise table's columns, in order. The table is
// written for students, so it repeats the rubric rather than referring to it;
// CheckREADME is what keeps the copy honest.
var readmeColumns = []string{"Exercise", "Title", "Points", "Test"}

// separatorCell matches a Markdown table delimiter cell: ---, :--, --:, :-:.
var separatorCell = regexp.MustCompile(`^:?-{3,}:?$`)

// readmeRow is one data row of the exercise table, as written.
type readmeRow struct {
	line                  int
	id, title, points, tc string
}

// CheckREADME checks that a chapter's lesson carries the chapter's exercise
// table exactly as the rubric has it:
//
//	| Exercise | Title | Points | Test |
//	|---|---|---|---|
//	| 1.1 | Read one frame | 15 | TestEx1_1_ReadFrame |
//
// Text around the table is free. The error lists every mismatch (missing row,
// extra row, wrong title, points or test, malformed table), one per line.
func CheckREADME(ch Chapter, readme []byte) error {
	rows, found, err := parseExerciseTable(readme)
	if !found {
		return fmt.Errorf("chapter %s README: %w", ch.ID, err)
	}
	var errs []error
	if err != nil {
		errs = append(errs, fmt.Errorf("chapter %s README: %w", ch.ID, err))
	}
	add := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("chapter %s README: "+format, append([]any{ch.ID}, args...)...))
	}

	byID := map[string]readmeRow{}
	for _, row := range rows {
		if prev, dup := byID[row.id]; dup {
			add("line %d: exercise %s is listed twice (also line %d)", row.line, row.id, prev.line)
			continue
		}
		byID[row.id] = row
	}
	known := map[string]bool{}
	for _, ex := range ch.Exercises {
		known[ex.ID] = true
		row, ok := byID[ex.ID]
		if !ok {
			add("missing row for exercise %s: | %s | %s | %d | %s |", ex.ID, ex.ID, ex.Title, ex.Points, ex.Test)
			continue
		}
		if row.title != ex.Title {
			add("line %d: exercise %s title is %q, rubric says %q", row.line, ex.ID, row.title, ex.Title)
		}
		if row.points != strconv.Itoa(ex.Points) {
			add("line %d: exercise %s points are %q, rubric says %d", row.line, ex.ID, row.points, ex.Points)
		}
		if row.tc != ex.Test {
			add("line %d: exercise %s test is %q, rubric says %q", row.line, ex.ID, row.tc, ex.Test)
		}
	}
	for _, row := range rows {
		if !known[row.id] {
			add("line %d: extra row for exercise %q, which the rubric does not list", row.line, row.id)
		}
	}
	return errors.Join(errs...)
}

// parseExerciseTable finds the one table whose header starts with "Exercise"
// and returns its data rows, whether such a table exists, and every problem
// with its shape. A table ends at the first line that does not start with "|".
func parseExerciseTable(readme []byte) ([]readmeRow, bool, error) {
	var (
		rows     []readmeRow
		errs     []error
		inTable  bool
		found    int
		sepWant  bool // the next line must be the delimiter row
		lineNo   int
		scanner  = bufio.NewScanner(bytes.NewReader(readme))
		wantCols = len(readmeColumns)
	)
	scanner.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for scanner.Scan() {
		lineNo++
		line := strings.TrimSpace(scanner.Text())
		isRow := strings.HasPrefix(line, "|")
		cells := splitRow(line)
		switch {
		case sepWant:
			sepWant = false
			if !isRow || len(cells) != wantCols || !allMatch(cells, separatorCell) {
				errs = append(errs, fmt.Errorf("line %d: the exercise table's header must be followed by |---|---|---|---|", lineNo))
				inTable = false
			}
		case inTable && isRow:
			if len(cells) != wantCols {
				errs = append(errs, fmt.Errorf("line %d: row has %d cells, want %d (%s)", lineNo, len(cells), wantCols, strings.Join(readmeColumns, " | ")))
				continue
			}
			rows = append(rows, readmeRow{line: lineNo, id: cells[0], title: cells[1], points: cells[2], tc: cells[3]})
		case isRow && len(cells) > 0 && cells[0] == readmeColumns[0]:
			inTable = false
			found++
			if found > 1 {
				errs = append(errs, fmt.Errorf("line %d: a second exercise table; a lesson has exactly one", lineNo))
				continue
			}
			if !slices.Equal(cells, readmeColumns) {
				errs = append(errs, fmt.Errorf("line %d: exercise table header is | %s |, want | %s |", lineNo, strings.Join(cells, " | "), strings.Join(readmeColumns, " | ")))
				continue
			}
			inTable, sepWant = true, true
		default:
			inTable = false
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, false, err
	}
	if sepWant {
		errs = append(errs, errors.New("the exercise table's header must be followed by |---|---|---|---|"))
	}
	if found == 0 {
		errs = append(errs, fmt.Errorf("no exercise table (a line | %s |)", strings.Join(readmeColumns, " | ")))
	}
	return rows, found > 0, errors.Join(errs...)
}

// splitRow splits "| a | b |" into trimmed cells ["a", "b"]. A line that is
// not a table row yields nil.
func splitRow(line string) []string {
	if !strings.HasPrefix(line, "|") {
		return nil
	}
	inner := strings.TrimPrefix(line, "|")
	inner = strings.TrimSuffix(inner, "|")
	parts := strings.Split(inner, "|")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

func allMatch(cells []string, re *regexp.Regexp) bool {
	for _, c := range cells {
		if !re.MatchString(c) {
			return false
		}
	}
	return true
}
