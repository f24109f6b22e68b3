package nn

import (
	"math"
	"testing"
)

// Hand-computed: output 1 truth 0,1,…,10 (range 10), errors 0.1·(i+1)
// alternating sign: MAE = 0.1·66/11 = 0.6, nMAE = 6 %, sorted errors
// 0.1 … 1.1, 90 % position 0.9·10 = 9 → the 10th smallest, 1.0. Output 2 truth 2·i, errors 0,0,…,0,5 (one outlier): MAE = 5/11,
// nMAE = 100·(5/11)/20, 90 % AE at position 9 of [0…0,5] → 0.
// A third case with 4 rows: errors 1,2,3,4 → position 0.9·3 = 2.7 →
// 3 + 0.7·(4 − 3) = 3.7 (the type-7 rule numpy.percentile uses).
func TestMetricsByHand(t *testing.T) {
	const tol = 1e-12
	n, m := 11, 2
	pred := make([]float64, n*m)
	truth := make([]float64, n*m)
	for i := 0; i < n; i++ {
		truth[i*m] = float64(i)
		s := 1.0
		if i%2 == 1 {
			s = -1
		}
		pred[i*m] = float64(i) + s*0.1*float64(i+1)
		truth[i*m+1] = 2 * float64(i)
		pred[i*m+1] = 2 * float64(i)
	}
	pred[5*m+1] += 5
	r, err := Metrics(pred, truth, n, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []OutputMetrics{{6, 0.6, 1.0}, {100 * (5.0 / 11) / 20, 5.0 / 11, 0}}
	for j := range want {
		if math.Abs(r[j].NMAE-want[j].NMAE) > tol || math.Abs(r[j].MAE-want[j].MAE) > tol || math.Abs(r[j].AE90-want[j].AE90) > tol {
			t.Errorf("output %d: %+v, want %+v", j+1, r[j], want[j])
		}
	}
	r, _ = Metrics([]float64{1, 2, 3, 4}, []float64{0, 0, 0, 8}, 4, 1)
	// errors 1, 2, 3, 4 → 90 % AE 3.7, MAE 2.5, nMAE 100·2.5/8
	if math.Abs(r[0].AE90-3.7) > tol || math.Abs(r[0].MAE-2.5) > tol || math.Abs(r[0].NMAE-31.25) > tol {
		t.Errorf("4 rows: %+v", r[0])
	}
	if _, err := Metrics(pred, truth, n, 3); err == nil {
		t.Error("size mismatch accepted")
	}
}
