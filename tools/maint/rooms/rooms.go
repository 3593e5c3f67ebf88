// Package rooms states the course's layout as rules, and its tests hold the
// module's import graph to them (go list, every build tag the course uses)
// and hold the map that draws them, docs/architecture.md, to the same rules.
// The rooms and why they are divided so are explained there, once.
package rooms

import "strings"

// A Room is one folder of the layout.
type Room string

// The rooms, from the ground up.
const (
	Given     Room = "given"
	Tests     Room = "tests"
	Chapters  Room = "chapters"
	Solutions Room = "solutions"
	Internal  Room = "internal"
	Cmd       Room = "cmd"
	Maint     Room = "maint"
	Other     Room = "" // a folder the layout does not know: a test failure
)

// mayImport lists, for each room, the rooms its packages may import (besides
// their own room, with the limits Allowed adds).
var mayImport = map[Room][]Room{
	Given:     {},
	Tests:     {Given},
	Chapters:  {Given, Tests},
	Solutions: {Given, Tests},
	Internal:  {Given, Tests},
	Cmd:       {Given, Internal, Tests},
	Maint:     {Given, Internal, Tests},
}

// Of names the room of a package, given its path relative to the module
// ("tools/given/wire", "chapters/07/cmd/chatcore-server").
func Of(rel string) Room {
	first, rest, _ := strings.Cut(rel, "/")
	switch first {
	case "chapters", "solutions", "tests":
		return Room(first)
	case "tools":
		second, _, _ := strings.Cut(rest, "/")
		switch Room(second) {
		case Given, Internal, Cmd, Maint:
			return Room(second)
		}
	}
	return Other
}

// Allowed says whether the package at from may import the package at to
// (both relative to the module). Within a room the limits are: a chapter
// (or solution) imports only its own subtree, not another chapter; a command
// only its own subtree, never another command. A test of the solution-backed
// kind (forSolutions: a file built only with the "solutions" tag, which the
// release leaves out) may also import solutions/.
func Allowed(from, to string, forSolutions bool) bool {
	rf, rt := Of(from), Of(to)
	if rf == Other || rt == Other {
		return false
	}
	if rf == rt {
		switch rf {
		case Chapters, Solutions:
			return chapterOf(from) == chapterOf(to)
		case Cmd:
			return commandOf(from) == commandOf(to)
		}
		return true
	}
	if rt == Solutions && forSolutions {
		return true
	}
	for _, r := range mayImport[rf] {
		if r == rt {
			return true
		}
	}
	return false
}

// chapterOf is "chapters/07" for "chapters/07/cmd/chatcore-server".
func chapterOf(rel string) string {
	parts := strings.SplitN(rel, "/", 3)
	return strings.Join(parts[:min(2, len(parts))], "/")
}

// commandOf is "tools/cmd/bench" for "tools/cmd/bench/peers/epollrelay".
func commandOf(rel string) string {
	parts := strings.SplitN(rel, "/", 4)
	return strings.Join(parts[:min(3, len(parts))], "/")
}
