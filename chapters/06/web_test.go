package web_test

import (
	"testing"

	"serverlab/tests/testkit"
	"serverlab/tests/webtest"
)

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx6_1_Parse(t *testing.T)      { webtest.Parse(t, impl) }
func TestEx6_2_Paths(t *testing.T)      { webtest.Paths(t, impl) }
func TestEx6_3_Static(t *testing.T)     { webtest.Static(t, impl) }
func TestEx6_4_CGI(t *testing.T)        { webtest.CGI(t, impl) }
func TestEx6_5_FIFO(t *testing.T)       { webtest.FIFO(t, impl) }
func TestEx6_6_SFF(t *testing.T)        { webtest.SFF(t, impl) }
func TestEx6_7_Robustness(t *testing.T) { webtest.Robustness(t, impl) }

func FuzzReadRequest(f *testing.F) { webtest.FuzzReadRequest(f, impl) }
func FuzzResolve(f *testing.F)     { webtest.FuzzResolve(f, impl) }
