package twobarindirect

import (
	"testing"

	"github.com/kinfer/kinfer/builtin/flexmb/twobar"
)

func benchEval(b *testing.B, p [twobar.NParam]float64, t float64) {
	m, _ := New([]float64{twobar.DefaultStep, twobar.DefaultAlpha})
	y := make([]float64, no)
	for b.Loop() {
		if st := m.Eval(p[:], []float64{t}, y); st != 0 {
			b.Fatal(st)
		}
	}
}

// One 3 s simulation of the two-bar system (3000 HHT steps).
func BenchmarkSimulate3s(b *testing.B) { benchEval(b, twobar.PSol, 3) }

func BenchmarkSimulateT1(b *testing.B) { benchEval(b, twobar.PSol, twobar.T1) }

func BenchmarkSimulateT1Stiff(b *testing.B) {
	benchEval(b, [4]float64{1, 5, 4000, 5}, twobar.T1)
}
