package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// JUnit XML, as CI systems read it: one testsuite per chapter, one testcase
// per exercise, a failure (its type the cause) for every lost exercise.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Package    string          `xml:"package,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	Time       string          `xml:"time,attr"`
	File       string          `xml:"file,attr,omitempty"`
	Line       int             `xml:"line,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property"`
	Failure    *junitFailure   `xml:"failure"`
}

type junitFailure struct {
	Type    string `xml:"type,attr"`
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

func writeJUnit(w io.Writer, rep *Report) error {
	out := junitSuites{Name: "serverlab " + rep.Target, Time: junitTime(rep.Duration)}
	for _, ch := range rep.Chapters {
		s := junitSuite{
			Name:    ch.ID + " " + ch.Title,
			Package: ch.Package,
			Time:    junitTime(ch.Duration),
			Properties: []junitProperty{
				{Name: "points", Value: strconv.Itoa(ch.Points)},
				{Name: "max_points", Value: strconv.Itoa(ch.Max)},
			},
		}
		for _, ex := range ch.Exercises {
			s.Cases = append(s.Cases, junitTestCase(ch, ex))
			s.Tests++
			if !ex.Passed {
				s.Failures++
			}
		}
		out.Tests += s.Tests
		out.Failures += s.Failures
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
		File:      ex.File,
		Line:      ex.Line,
		Properties: []junitProperty{
			{Name: "points", Value: strconv.Itoa(ex.Points)},
			{Name: "max_points", Value: strconv.Itoa(ex.Max)},
		},
	}
	if !ex.Passed {
		first, _, _ := strings.Cut(ex.Message, "\n")
		c.Failure = &junitFailure{Type: string(ex.Cause), Message: first, Text: ex.Message}
	}
	return c
}

func junitTime(s Seconds) string {
	return fmt.Sprintf("%.3f", float64(s)/1e9)
}
