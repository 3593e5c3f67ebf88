package chat_test

import (
	"testing"

	"serverlab/tests/chattest"
	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx2_1_Login(t *testing.T)          { chattest.Login(t, impl) }
func TestEx2_2_Broadcast(t *testing.T)      { chattest.Broadcast(t, impl) }
func TestEx2_3_PrivateMessage(t *testing.T) { chattest.PrivateMessage(t, impl) }
func TestEx2_4_UserQuery(t *testing.T)      { chattest.UserQuery(t, impl) }
func TestEx2_5_Isolation(t *testing.T)      { chattest.Isolation(t, impl) }
func TestEx2_6_Shutdown(t *testing.T)       { chattest.Shutdown(t, impl) }
