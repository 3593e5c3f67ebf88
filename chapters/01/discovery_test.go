package discovery_test

import (
	"testing"

	"serverlab/tests/discoverytest"
	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx1_1_ReadFrame(t *testing.T)  { discoverytest.ReadFrame(t, impl) }
func TestEx1_2_WriteFrame(t *testing.T) { discoverytest.WriteFrame(t, impl) }
func TestEx1_3_UserStore(t *testing.T)  { discoverytest.UserStore(t, impl) }
func TestEx1_4_Serve(t *testing.T)      { discoverytest.Serve(t, impl) }
func TestEx1_5_Deadlines(t *testing.T)  { discoverytest.Deadlines(t, impl) }
func TestEx1_6_Close(t *testing.T)      { discoverytest.Close(t, impl) }

func FuzzReadFrame(f *testing.F) { discoverytest.FuzzReadFrame(f, impl) }
