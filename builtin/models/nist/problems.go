package nist

import "math"

// Problem is one NIST StRD nonlinear regression model: its name (the
// dataset's), its number of parameters b1…bP and its function
// f(b, x1, x2) with, when grad is not nil, the gradient ∂f/∂b written into
// grad[0:P]. Only Nelson reads x2.
type Problem struct {
	Name string
	P    int
	F    func(b []float64, x1, x2 float64, grad []float64) float64
}

// Problems are the 27 StRD nonlinear regression problems in NIST's order
// (by level of difficulty: lower, average, higher). The formulas are the
// "Model:" lines of the NIST files (testdata/*.dat); the derivatives are
// worked out by hand and checked against finite differences in the tests.
var Problems = []Problem{
	{"Misra1a", 2, misra1a},
	{"Chwirut2", 3, chwirut},
	{"Chwirut1", 3, chwirut},
	{"Lanczos3", 6, lanczos},
	{"Gauss1", 8, gauss},
	{"Gauss2", 8, gauss},
	{"DanWood", 2, danWood},
	{"Misra1b", 2, misra1b},
	{"Kirby2", 5, kirby2},
	{"Hahn1", 7, rational33},
	{"Nelson", 3, nelson},
	{"MGH17", 5, mgh17},
	{"Lanczos1", 6, lanczos},
	{"Lanczos2", 6, lanczos},
	{"Gauss3", 8, gauss},
	{"Misra1c", 2, misra1c},
	{"Misra1d", 2, misra1d},
	{"Roszman1", 4, roszman1},
	{"ENSO", 9, enso},
	{"MGH09", 4, mgh09},
	{"Thurber", 7, rational33},
	{"BoxBOD", 2, misra1a},
	{"Rat42", 3, rat42},
	{"MGH10", 3, mgh10},
	{"Eckerle4", 3, eckerle4},
	{"Rat43", 4, rat43},
	{"Bennett5", 3, bennett5},
}

// ProblemIndex returns the index of the named problem in Problems, or -1.
func ProblemIndex(name string) int {
	for i, p := range Problems {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// Misra1a, BoxBOD: y = b1·(1 − exp(−b2·x)).
func misra1a(b []float64, x, _ float64, g []float64) float64 {
	e := math.Exp(-b[1] * x)
	if g != nil {
		g[0] = 1 - e
		g[1] = b[0] * x * e
	}
	return b[0] * (1 - e)
}

// Chwirut1, Chwirut2: y = exp(−b1·x)/(b2 + b3·x).
func chwirut(b []float64, x, _ float64, g []float64) float64 {
	e := math.Exp(-b[0] * x)
	u := b[1] + b[2]*x
	if g != nil {
		g[0] = -x * e / u
		g[1] = -e / (u * u)
		g[2] = -x * e / (u * u)
	}
	return e / u
}

// Lanczos1–3: y = b1·exp(−b2·x) + b3·exp(−b4·x) + b5·exp(−b6·x).
func lanczos(b []float64, x, _ float64, g []float64) float64 {
	y := 0.0
	for i := 0; i < 6; i += 2 {
		e := math.Exp(-b[i+1] * x)
		y += b[i] * e
		if g != nil {
			g[i] = e
			g[i+1] = -x * b[i] * e
		}
	}
	return y
}

// Gauss1–3: y = b1·exp(−b2·x) + b3·exp(−(x−b4)²/b5²) + b6·exp(−(x−b7)²/b8²).
func gauss(b []float64, x, _ float64, g []float64) float64 {
	e1 := math.Exp(-b[1] * x)
	y := b[0] * e1
	if g != nil {
		g[0] = e1
		g[1] = -x * b[0] * e1
	}
	for _, k := range []int{2, 5} {
		a, c, w := b[k], b[k+1], b[k+2]
		d := x - c
		e := math.Exp(-d * d / (w * w))
		y += a * e
		if g != nil {
			g[k] = e
			g[k+1] = a * e * 2 * d / (w * w)
			g[k+2] = a * e * 2 * d * d / (w * w * w)
		}
	}
	return y
}

// DanWood: y = b1·x^b2.
func danWood(b []float64, x, _ float64, g []float64) float64 {
	p := math.Pow(x, b[1])
	if g != nil {
		g[0] = p
		g[1] = b[0] * p * math.Log(x)
	}
	return b[0] * p
}

// Misra1b: y = b1·(1 − (1 + b2·x/2)^−2).
func misra1b(b []float64, x, _ float64, g []float64) float64 {
	u := 1 + b[1]*x/2
	if g != nil {
		g[0] = 1 - 1/(u*u)
		g[1] = b[0] * x / (u * u * u)
	}
	return b[0] * (1 - 1/(u*u))
}

// Kirby2: y = (b1 + b2·x + b3·x²)/(1 + b4·x + b5·x²).
func kirby2(b []float64, x, _ float64, g []float64) float64 {
	n := b[0] + x*(b[1]+x*b[2])
	d := 1 + x*(b[3]+x*b[4])
	if g != nil {
		g[0] = 1 / d
		g[1] = x / d
		g[2] = x * x / d
		g[3] = -n * x / (d * d)
		g[4] = -n * x * x / (d * d)
	}
	return n / d
}

// Hahn1, Thurber: y = (b1 + b2·x + b3·x² + b4·x³)/(1 + b5·x + b6·x² + b7·x³).
func rational33(b []float64, x, _ float64, g []float64) float64 {
	n := b[0] + x*(b[1]+x*(b[2]+x*b[3]))
	d := 1 + x*(b[4]+x*(b[5]+x*b[6]))
	if g != nil {
		xk := 1.0
		for k := 0; k < 4; k++ {
			g[k] = xk / d
			if k > 0 {
				g[3+k] = -n * xk / (d * d)
			}
			xk *= x
		}
	}
	return n / d
}

// Nelson: log(y) = b1 − b2·x1·exp(−b3·x2). The response is log(y): the
// dataset's y must be logged before fitting (NIST: "log[y] = ...").
func nelson(b []float64, x1, x2 float64, g []float64) float64 {
	e := math.Exp(-b[2] * x2)
	if g != nil {
		g[0] = 1
		g[1] = -x1 * e
		g[2] = b[1] * x1 * x2 * e
	}
	return b[0] - b[1]*x1*e
}

// MGH17: y = b1 + b2·exp(−x·b4) + b3·exp(−x·b5).
func mgh17(b []float64, x, _ float64, g []float64) float64 {
	e4 := math.Exp(-x * b[3])
	e5 := math.Exp(-x * b[4])
	if g != nil {
		g[0] = 1
		g[1] = e4
		g[2] = e5
		g[3] = -x * b[1] * e4
		g[4] = -x * b[2] * e5
	}
	return b[0] + b[1]*e4 + b[2]*e5
}

// Misra1c: y = b1·(1 − (1 + 2·b2·x)^−½).
func misra1c(b []float64, x, _ float64, g []float64) float64 {
	u := 1 + 2*b[1]*x
	s := 1 / math.Sqrt(u)
	if g != nil {
		g[0] = 1 - s
		g[1] = b[0] * x * s / u
	}
	return b[0] * (1 - s)
}

// Misra1d: y = b1·b2·x/(1 + b2·x).
func misra1d(b []float64, x, _ float64, g []float64) float64 {
	u := 1 + b[1]*x
	if g != nil {
		g[0] = b[1] * x / u
		g[1] = b[0] * x / (u * u)
	}
	return b[0] * b[1] * x / u
}

// Roszman1: y = b1 − b2·x − arctan(b3/(x − b4))/π.
func roszman1(b []float64, x, _ float64, g []float64) float64 {
	w := x - b[3]
	t := b[2] / w
	if g != nil {
		c := 1 / (math.Pi * (1 + t*t))
		g[0] = 1
		g[1] = -x
		g[2] = -c / w
		g[3] = -c * b[2] / (w * w)
	}
	return b[0] - b[1]*x - math.Atan(t)/math.Pi
}

// ENSO: y = b1 + b2·cos(2πx/12) + b3·sin(2πx/12) + b5·cos(2πx/b4) +
// b6·sin(2πx/b4) + b8·cos(2πx/b7) + b9·sin(2πx/b7).
func enso(b []float64, x, _ float64, g []float64) float64 {
	// math.Sincos: one argument reduction for both (the same values as
	// math.Sin and math.Cos).
	a := 2 * math.Pi * x / 12
	s0, c0 := math.Sincos(a)
	y := b[0] + b[1]*c0 + b[2]*s0
	if g != nil {
		g[0] = 1
		g[1] = c0
		g[2] = s0
	}
	for _, k := range []int{3, 6} {
		p := b[k]
		ak := 2 * math.Pi * x / p
		s, c := math.Sincos(ak)
		y += b[k+1]*c + b[k+2]*s
		if g != nil {
			// d(ak)/d(p) = −ak/p.
			g[k] = (b[k+1]*s - b[k+2]*c) * ak / p
			g[k+1] = c
			g[k+2] = s
		}
	}
	return y
}

// MGH09: y = b1·(x² + x·b2)/(x² + x·b3 + b4).
func mgh09(b []float64, x, _ float64, g []float64) float64 {
	n := x*x + x*b[1]
	d := x*x + x*b[2] + b[3]
	if g != nil {
		g[0] = n / d
		g[1] = b[0] * x / d
		g[2] = -b[0] * n * x / (d * d)
		g[3] = -b[0] * n / (d * d)
	}
	return b[0] * n / d
}

// Rat42: y = b1/(1 + exp(b2 − b3·x)).
func rat42(b []float64, x, _ float64, g []float64) float64 {
	e := math.Exp(b[1] - b[2]*x)
	u := 1 + e
	if g != nil {
		g[0] = 1 / u
		g[1] = -b[0] * e / (u * u)
		g[2] = b[0] * x * e / (u * u)
	}
	return b[0] / u
}

// MGH10: y = b1·exp(b2/(x + b3)).
func mgh10(b []float64, x, _ float64, g []float64) float64 {
	w := x + b[2]
	e := math.Exp(b[1] / w)
	if g != nil {
		g[0] = e
		g[1] = b[0] * e / w
		g[2] = -b[0] * e * b[1] / (w * w)
	}
	return b[0] * e
}

// Eckerle4: y = (b1/b2)·exp(−½·((x − b3)/b2)²).
func eckerle4(b []float64, x, _ float64, g []float64) float64 {
	z := (x - b[2]) / b[1]
	e := math.Exp(-0.5 * z * z)
	if g != nil {
		g[0] = e / b[1]
		g[1] = b[0] * e * (z*z - 1) / (b[1] * b[1])
		g[2] = b[0] * e * z / (b[1] * b[1])
	}
	return b[0] / b[1] * e
}

// Rat43: y = b1/(1 + exp(b2 − b3·x))^(1/b4).
func rat43(b []float64, x, _ float64, g []float64) float64 {
	e := math.Exp(b[1] - b[2]*x)
	u := 1 + e
	p := math.Pow(u, -1/b[3])
	if g != nil {
		g[0] = p
		g[1] = -b[0] * p * e / (b[3] * u)
		g[2] = b[0] * p * e * x / (b[3] * u)
		g[3] = b[0] * p * math.Log(u) / (b[3] * b[3])
	}
	return b[0] * p
}

// Bennett5: y = b1·(b2 + x)^(−1/b3), computed as b1·exp(−ln(b2 + x)/b3):
// one logarithm, which the derivative in b3 needs anyway, and one
// exponential instead of math.Pow (a third of the time; the same value
// within a few ulps, well inside the certified 11 digits). For b2 + x < 0
// the value is NaN, as math.Pow's is unless −1/b3 happens to be an integer.
func bennett5(b []float64, x, _ float64, g []float64) float64 {
	u := b[1] + x
	lu := math.Log(u)
	p := math.Exp(-lu / b[2])
	if g != nil {
		g[0] = p
		g[1] = -b[0] * p / (b[2] * u)
		g[2] = b[0] * p * lu / (b[2] * b[2])
	}
	return b[0] * p
}
