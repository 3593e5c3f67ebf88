//go:build linux

package evloop_test

import (
	"testing"

	evloop "serverlab/solutions/05"
	"serverlab/tests/epolltest"
	"serverlab/tests/testkit"
	"serverlab/tools/lab"
)

// loop sets the loop's limits from the suite's.
func loop(l epolltest.Limits) evloop.Options {
	return evloop.Options{HighWater: l.HighWater, MaxPending: l.MaxPending, Logger: testkit.Logger()}
}

// impl hands this chapter's package to the suite in tests/epolltest.
var impl = epolltest.Impl{
	DrainFrames: evloop.DrainFrames,
	DrainLines:  evloop.DrainLines,
	NewChat: func(c epolltest.ChatConfig) (lab.Server, error) {
		return evloop.NewChat(evloop.ChatConfig{UsersPath: c.UsersPath, LoginTimeout: c.LoginTimeout, Loop: loop(c.Limits)})
	},
	NewStock: func(c epolltest.StockConfig) (lab.Server, error) {
		return evloop.NewStock(evloop.StockConfig{StockPath: c.StockPath, Loop: loop(c.Limits)})
	},
}

func TestMain(m *testing.M) { testkit.Main(m) }

func TestEx5_1_DrainFrames(t *testing.T)   { epolltest.DrainFrames(t, impl) }
func TestEx5_2_DrainLines(t *testing.T)    { epolltest.DrainLines(t, impl) }
func TestEx5_3_Leftovers(t *testing.T)     { epolltest.Leftovers(t, impl) }
func TestEx5_4_PartialWrites(t *testing.T) { epolltest.PartialWrites(t, impl) }
func TestEx5_5_BackPressure(t *testing.T)  { epolltest.BackPressure(t, impl) }
func TestEx5_6_NoBusyLoop(t *testing.T)    { epolltest.NoBusyLoop(t, impl) }
func TestEx5_7_EMFILE(t *testing.T)        { epolltest.EMFILE(t, impl) }
func TestEx5_8_Close(t *testing.T)         { epolltest.Close(t, impl) }
