//go:build !judge

package ladderfix

var impl = Impl{
	Double:     Double,
	Greet:      Greet,
	CountTwice: func() int { var c Counter; c.Add(); return c.Add() },
}
