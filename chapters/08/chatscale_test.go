package chatscale_test

import (
	"testing"

	"serverlab/tests/chatscaletest"
	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx8_1_DurableEcho(t *testing.T) { chatscaletest.DurableEcho(t, impl) }
func TestEx8_2_OneOrder(t *testing.T)    { chatscaletest.OneOrder(t, impl) }
func TestEx8_3_History(t *testing.T)     { chatscaletest.History(t, impl) }
func TestEx8_4_Unique(t *testing.T)      { chatscaletest.Unique(t, impl) }
func TestEx8_5_Sessions(t *testing.T)    { chatscaletest.Sessions(t, impl) }
