package grade

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// A formatter writes a report in one output format.
type Formatter func(w io.Writer, rep *Report) error

// formats are the -format choices.
var formats = map[string]Formatter{
	"text":       writeText,
	"gradescope": writeGradescope,
	"classroom":  writeClassroom,
	"junit":      writeJUnit,
	"json":       writeJSON,
}

func FormatNames() string {
	names := make([]string, 0, len(formats))
	for name := range formats {
		names = append(names, name)
	}
	slices.Sort(names)
	return strings.Join(names, "|")
}

// lookupFormat returns the formatter for a -format value.
func LookupFormat(name string) (Formatter, error) {
	f, ok := formats[name]
	if !ok {
		return nil, fmt.Errorf("unknown -format %q (want %s)", name, FormatNames())
	}
	return f, nil
}
