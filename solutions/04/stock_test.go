package stock_test

import (
	"testing"

	"serverlab/tests/stocktest"
	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx4_1_Tree(t *testing.T)         { stocktest.Tree(t, impl) }
func TestEx4_2_Commands(t *testing.T)     { stocktest.Commands(t, impl) }
func TestEx4_3_RWLock(t *testing.T)       { stocktest.RWLock(t, impl) }
func TestEx4_4_Conservation(t *testing.T) { stocktest.Conservation(t, impl) }
func TestEx4_5_WorkerPool(t *testing.T)   { stocktest.WorkerPool(t, impl) }
func TestEx4_6_Persistence(t *testing.T)  { stocktest.Persistence(t, impl) }
func TestEx4_7_Close(t *testing.T)        { stocktest.Close(t, impl) }

func BenchmarkRWLock(b *testing.B) { stocktest.BenchmarkRWLock(b, impl) }
func BenchmarkServer(b *testing.B) { stocktest.BenchmarkServer(b, impl) }
