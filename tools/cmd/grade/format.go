package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// A formatter writes a report in one output format.
type formatter func(w io.Writer, rep *Report) error

// formats are the -format choices.
var formats = map[string]formatter{
	"text":       writeText,
	"gradescope": writeGradescope,
	"classroom":  writeClassroom,
	"junit":      writeJUnit,
	"json":       writeJSON,
}

func formatNames() string {
	names := make([]string, 0, len(formats))
	for name := range formats {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, "|")
}

// lookupFormat returns the formatter for a -format value.
func lookupFormat(name string) (formatter, error) {
	f, ok := formats[name]
	if !ok {
		return nil, fmt.Errorf("unknown -format %q (want %s)", name, formatNames())
	}
	return f, nil
}
