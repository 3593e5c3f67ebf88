package grade

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// JUnit XML as CI systems read it, within the common junit-10 schema (the
// one Jenkins publishes): one testsuite per chapter, one testcase per
// exercise. A lost exercise is a <failure> (its type the cause); one that
// could not be built is an <error>; one that never ran is <skipped>. The
// schema allows properties on suites only, so an exercise's points are suite
// properties named after it ("1.3 points").
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr"`
	Hostname   string          `xml:"hostname,attr"`
	ID         int             `xml:"id,attr"`
	Package    string          `xml:"package,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
	SystemOut  string          `xml:"system-out,omitempty"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Skipped   *junitSkipped `xml:"skipped"`
	Error     *junitFailure `xml:"error"`
	Failure   *junitFailure `xml:"failure"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func writeJUnit(w io.Writer, rep *Report) error {
	host, _ := os.Hostname()
	if host == "" {
		host = "localhost"
	}
	started := rep.Started
	if started.IsZero() {
		started = time.Now()
	}
	out := junitSuites{Name: "serverlab " + rep.Target, Time: junitTime(rep.Duration)}
	for i, ch := range rep.Chapters {
		s := junitSuite{
			Name:      ch.ID + " " + ch.Title,
			Package:   ch.Package,
			Time:      junitTime(ch.Duration),
			Timestamp: started.UTC().Format("2006-01-02T15:04:05"),
			Hostname:  host,
			ID:        i,
			Properties: []junitProperty{
				{Name: "points", Value: strconv.Itoa(ch.Points)},
				{Name: "max_points", Value: strconv.Itoa(ch.Max)},
			},
			SystemOut: strings.Join(rep.Notes, "\n"),
		}
		for _, ex := range ch.Exercises {
			s.Properties = append(s.Properties, junitProperty{Name: ex.ID + " points", Value: points(ex.Points, ex.Max)})
			c := junitTestCase(ch, ex)
			switch {
			case c.Error != nil:
				s.Errors++
			case c.Skipped != nil:
				s.Skipped++
			case c.Failure != nil:
				s.Failures++
			}
			s.Cases = append(s.Cases, c)
			s.Tests++
		}
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func junitTestCase(ch ChapterResult, ex ExerciseResult) junitCase {
	c := junitCase{
		Name:      ex.ID + " " + ex.Title + " (" + ex.Test + ")",
		Classname: ch.Package,
		Time:      junitTime(ex.Duration),
	}
	if ex.File != "" {
		c.SystemOut = fmt.Sprintf("%s:%d", ex.File, ex.Line)
	}
	if ex.Passed {
		return c
	}
	first, _, _ := strings.Cut(ex.Message, "\n")
	f := &junitFailure{Type: string(ex.Cause), Message: first, Text: ex.Message}
	switch ex.Cause {
	case CauseBuildError:
		c.Error = f
	case CauseNotRun:
		c.Skipped = &junitSkipped{Message: first}
	default:
		c.Failure = f
	}
	return c
}

func junitTime(s Seconds) string {
	return fmt.Sprintf("%.3f", float64(s)/1e9)
}
