package chatcore_test

import (
	"testing"

	"serverlab/tests/chatcoretest"
	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx7_1_Frames(t *testing.T)       { chatcoretest.Frames(t, impl) }
func TestEx7_2_Users(t *testing.T)        { chatcoretest.Users(t, impl) }
func TestEx7_3_Channels(t *testing.T)     { chatcoretest.Channels(t, impl) }
func TestEx7_4_History(t *testing.T)      { chatcoretest.History(t, impl) }
func TestEx7_5_BackPressure(t *testing.T) { chatcoretest.BackPressure(t, impl) }
func TestEx7_6_Liveness(t *testing.T)     { chatcoretest.Liveness(t, impl) }
func TestEx7_7_Shutdown(t *testing.T)     { chatcoretest.Shutdown(t, impl) }
