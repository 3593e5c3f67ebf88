package jobserver_test

import (
	"testing"

	"serverlab/tests/jobtest"
	"serverlab/tests/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m, impl) }

func TestEx3_1_Parse(t *testing.T)        { jobtest.Parse(t, impl) }
func TestEx3_2_BoundedQueue(t *testing.T) { jobtest.BoundedQueue(t, impl) }
func TestEx3_3_Pool(t *testing.T)         { jobtest.Pool(t, impl) }
func TestEx3_4_Server(t *testing.T)       { jobtest.Server(t, impl) }
func TestEx3_5_BackPressure(t *testing.T) { jobtest.BackPressure(t, impl) }
func TestEx3_6_Shutdown(t *testing.T)     { jobtest.Shutdown(t, impl) }
func TestEx3_7_Statistics(t *testing.T)   { jobtest.Statistics(t, impl) }
func BenchmarkServer(b *testing.B)        { jobtest.Benchmark(b, impl) }

func FuzzParse(f *testing.F)      { jobtest.FuzzParse(f, impl) }
func FuzzLineReader(f *testing.F) { jobtest.FuzzLineReader(f, impl) }
