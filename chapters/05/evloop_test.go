//go:build linux

package evloop_test

import (
	"testing"

	"serverlab/tests/chattest"
	"serverlab/tests/epolltest"
	"serverlab/tests/stocktest"
	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, impl, chatImpl, stockImpl) }

func TestEx5_1_DrainFrames(t *testing.T)   { epolltest.DrainFrames(t, impl) }
func TestEx5_2_DrainLines(t *testing.T)    { epolltest.DrainLines(t, impl) }
func TestEx5_3_Leftovers(t *testing.T)     { epolltest.Leftovers(t, impl) }
func TestEx5_4_PartialWrites(t *testing.T) { epolltest.PartialWrites(t, impl) }
func TestEx5_5_BackPressure(t *testing.T)  { epolltest.BackPressure(t, impl) }
func TestEx5_6_NoBusyLoop(t *testing.T)    { epolltest.NoBusyLoop(t, impl) }
func TestEx5_7_EMFILE(t *testing.T)        { epolltest.EMFILE(t, impl) }
func TestEx5_8_Close(t *testing.T)         { epolltest.Close(t, impl) }

func TestEx5_9_ChatLogin(t *testing.T)           { chattest.Login(t, chatImpl) }
func TestEx5_10_ChatBroadcast(t *testing.T)      { chattest.Broadcast(t, chatImpl) }
func TestEx5_11_ChatPrivateMessage(t *testing.T) { chattest.PrivateMessage(t, chatImpl) }
func TestEx5_12_ChatUserQuery(t *testing.T)      { chattest.UserQuery(t, chatImpl) }
func TestEx5_13_ChatIsolation(t *testing.T)      { chattest.Isolation(t, chatImpl) }
func TestEx5_14_ChatShutdown(t *testing.T)       { chattest.Shutdown(t, chatImpl) }
func TestEx5_15_StockCommands(t *testing.T)      { stocktest.Commands(t, stockImpl) }
func TestEx5_16_StockConservation(t *testing.T)  { stocktest.Conservation(t, stockImpl) }
func TestEx5_17_StockPersistence(t *testing.T)   { stocktest.Persistence(t, stockImpl) }
func TestEx5_18_StockClose(t *testing.T)         { stocktest.Close(t, stockImpl) }

func BenchmarkStockServer(b *testing.B) { stocktest.BenchmarkServer(b, stockImpl) }
