package kriging

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/kinfer/kinfer/builtin/design"
)

// Options configure Fit. The zero value is ordinary Kriging (order 0) with
// the Gaussian correlation and the default search.
type Options struct {
	// Order of the regression polynomial: 0 (constant), 1 (linear) or 2
	// (quadratic).
	Order int
	// Correlation function.
	Correlation Correlation
	// Theta0, optional, is one more start for the likelihood search (in
	// normalised coordinates, see Model.Theta). The search does not depend
	// on it unless it is better than every point of the fixed start design.
	Theta0 []float64
	// FixTheta skips the likelihood search and uses Theta0 (and Nugget) as
	// given, as DACE's dacefit does without bounds.
	FixTheta bool
	// ThetaLo and ThetaHi bound θ (normalised coordinates); defaults
	// 1e-3 … 1e2 for the Gaussian, 1e-2 … 1e1 for the others.
	ThetaLo, ThetaHi []float64
	// Nugget λ added to the diagonal of R, relative to the process
	// variance. 0 means DACE's regularisation (10 + n)·ε only, so the
	// predictor interpolates; with EstimateNugget it is a maximum-likelihood
	// parameter in [NuggetLo, NuggetHi] (defaults 1e-10, 1e-1).
	Nugget             float64
	EstimateNugget     bool
	NuggetLo, NuggetHi float64
	// Starts is the size of the fixed Sobol design of starting points in
	// ln θ space that the likelihood is screened on (default 32).
	Starts int
	// Local is the number of best screened points a local BFGS is run from
	// (default 3).
	Local int
	// Subset: when n > Subset, screening and the local searches use a
	// space-filling subset of Subset sites (greedy farthest points), and
	// the best optimum is then refined on all n sites (default 300; ≤ 0
	// uses all sites throughout).
	Subset int
	// RefineIterations bounds the BFGS iterations on each intermediate
	// subset (2·Subset, 4·Subset, … sites, while fewer than n) after the
	// first subset's search (default 8).
	RefineIterations int
	// Params is the number of leading coordinates that are parameters
	// (the rest are conditions, which a study evaluates at its data's
	// values only); 0 means all. The regression must be determined in
	// the parameters (checkRegression).
	Params int
	// Names, optional, name the coordinates in messages.
	Names []string
	// FullIterations bounds the final BFGS iterations on all n sites
	// (default 2; < 0 for none), each of which costs a Cholesky
	// factorisation and an inverse of the n×n correlation matrix.
	FullIterations int
}

// Info describes a fit: the likelihood search and its cost.
type Info struct {
	Objective     float64 // ln ψ = ln|R|/n + ln σ² at the optimum (all sites)
	Evaluations   int     // likelihood evaluations (subset and full)
	FullEvals     int     // of which on all sites
	Failures      int     // evaluations where R was not positive definite
	SubsetSize    int
	StartsTried   int
	LocalOptima   [][]float64 // ln θ at the end of each local search (subset)
	LocalValues   []float64
	ScreenSeconds float64
	LocalSeconds  float64
	RefineSeconds float64
	// Cond is the condition number of the correlation matrix R at the
	// optimum (gonum's Cholesky estimate): near 1/ε (≳ 1e12) the predictor
	// between the sites can be far off (a θ run to its lower bound), not
	// only noisy; a nugget cures it.
	Cond float64
}

// Model is a fitted Kriging predictor (DACE's dmodel).
type Model struct {
	d, n, p int
	order   int
	corr    Correlation
	xMean   []float64 // input normalisation: x̃ = (x − mean)/std
	xStd    []float64
	yMean   float64
	yStd    float64
	x       []float64 // normalised sites, n×d
	st      *fitState
	lChol   mat.TriDense
	info    Info
	lo, hi  []float64 // training box (original units)
	// xRaw (n×d row-major) and yRaw are the training data as given, kept
	// for Write: a file stores them and Read refits at the stored θ and λ.
	xRaw, yRaw []float64
}

// Fit fits a Kriging model to sites x (n rows of d) and responses y with
// maximum-likelihood correlation parameters (Lophaven, Nielsen &
// Søndergaard 2002, Sec. 3). Inputs and the response are normalised to zero
// mean and unit standard deviation first, as DACE does (dacefit). The
// search is deterministic: a fixed Sobol design of Starts points in the
// ln θ box (plus the box centre and Theta0), BFGS from the Local best, on
// a space-filling subset when n is large, then BFGS refinement of the best
// on all sites.
func Fit(x [][]float64, y []float64, opt Options) (*Model, error) {
	n := len(x)
	if n < 2 || len(y) != n {
		return nil, fmt.Errorf("kriging: need ≥ 2 sites and one response per site, got %d sites, %d responses", n, len(y))
	}
	d := len(x[0])
	if d < 1 {
		return nil, fmt.Errorf("kriging: sites have no coordinates")
	}
	if opt.Order < 0 || opt.Order > 2 {
		return nil, fmt.Errorf("kriging: regression order %d, want 0, 1 or 2", opt.Order)
	}
	if opt.Correlation < Gaussian || opt.Correlation > Matern52 {
		return nil, fmt.Errorf("kriging: unknown correlation %d", opt.Correlation)
	}
	p := nBasis(opt.Order, d)
	if n <= p {
		return nil, fmt.Errorf("kriging: %d sites for %d regression functions (order %d in %d-D): need more sites than functions", n, p, opt.Order, d)
	}
	m := &Model{d: d, n: n, p: p, order: opt.Order, corr: opt.Correlation,
		xMean: make([]float64, d), xStd: make([]float64, d),
		lo: make([]float64, d), hi: make([]float64, d)}
	for j := range d {
		m.lo[j], m.hi[j] = math.Inf(1), math.Inf(-1)
	}
	for i, row := range x {
		if len(row) != d {
			return nil, fmt.Errorf("kriging: site %d has %d coordinates, site 0 has %d", i, len(row), d)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("kriging: site %d coordinate %d is %v", i, j, v)
			}
			m.xMean[j] += v / float64(n)
			m.lo[j], m.hi[j] = min(m.lo[j], v), max(m.hi[j], v)
		}
		if math.IsNaN(y[i]) || math.IsInf(y[i], 0) {
			return nil, fmt.Errorf("kriging: response %d is %v", i, y[i])
		}
		m.yMean += y[i] / float64(n)
	}
	for j := range d {
		var s float64
		for _, row := range x {
			s += (row[j] - m.xMean[j]) * (row[j] - m.xMean[j])
		}
		m.xStd[j] = math.Sqrt(s / float64(n-1))
		// Constant is decided on the values, not on the standard
		// deviation: the mean of n equal values can differ from them in
		// the last bit, which leaves a standard deviation of 1e-17.
		if m.lo[j] == m.hi[j] || m.xStd[j] == 0 {
			return nil, fmt.Errorf("kriging: coordinate %d is constant over the sites", j)
		}
	}
	var s float64
	for _, v := range y {
		s += (v - m.yMean) * (v - m.yMean)
	}
	m.yStd = math.Sqrt(s / float64(n-1))
	if m.yStd == 0 {
		m.yStd = 1
	}
	m.x = make([]float64, n*d)
	m.xRaw, m.yRaw = make([]float64, 0, n*d), append([]float64(nil), y...)
	for _, row := range x {
		m.xRaw = append(m.xRaw, row...)
	}
	yn := make([]float64, n)
	for i, row := range x {
		for j, v := range row {
			m.x[i*d+j] = (v - m.xMean[j]) / m.xStd[j]
		}
		yn[i] = (y[i] - m.yMean) / m.yStd
	}
	if err := m.checkRegression(opt.Params, opt.Names); err != nil {
		return nil, err
	}

	// Search box in φ = (ln θ [, ln λ]).
	lo, hi := make([]float64, d), make([]float64, d)
	for j := range d {
		lo[j], hi[j] = 1e-3, 1e2
		if opt.Correlation != Gaussian {
			lo[j], hi[j] = 1e-2, 1e1
		}
		if opt.ThetaLo != nil {
			if len(opt.ThetaLo) != d {
				return nil, fmt.Errorf("kriging: ThetaLo has %d values for %d coordinates", len(opt.ThetaLo), d)
			}
			lo[j] = opt.ThetaLo[j]
		}
		if opt.ThetaHi != nil {
			if len(opt.ThetaHi) != d {
				return nil, fmt.Errorf("kriging: ThetaHi has %d values for %d coordinates", len(opt.ThetaHi), d)
			}
			hi[j] = opt.ThetaHi[j]
		}
		if !(lo[j] > 0 && hi[j] >= lo[j]) {
			return nil, fmt.Errorf("kriging: θ bounds of coordinate %d are [%g, %g]: need 0 < lo ≤ hi", j, lo[j], hi[j])
		}
		lo[j], hi[j] = math.Log(lo[j]), math.Log(hi[j])
	}
	reg := float64(10+n) * 2.220446049250313e-16 // DACE's (10+m)·eps
	nug := max(opt.Nugget, reg)
	if opt.Nugget < 0 {
		return nil, fmt.Errorf("kriging: nugget %g < 0", opt.Nugget)
	}
	if opt.EstimateNugget {
		nl, nh := opt.NuggetLo, opt.NuggetHi
		if nl == 0 {
			nl = 1e-10
		}
		if nh == 0 {
			nh = 1e-1
		}
		if !(nl > 0 && nh >= nl) {
			return nil, fmt.Errorf("kriging: nugget bounds [%g, %g]: need 0 < lo ≤ hi", nl, nh)
		}
		lo, hi = append(lo, math.Log(nl)), append(hi, math.Log(nh))
	}
	q := len(lo)
	if opt.Starts == 0 {
		opt.Starts = 32
	}
	if opt.Local == 0 {
		opt.Local = 3
	}
	if opt.Subset == 0 {
		opt.Subset = 300
	}
	if opt.RefineIterations == 0 {
		opt.RefineIterations = 8
	}
	if opt.FullIterations == 0 {
		opt.FullIterations = 2
	}

	if opt.FixTheta {
		if len(opt.Theta0) != d || opt.EstimateNugget {
			return nil, fmt.Errorf("kriging: FixTheta needs Theta0 with %d values and no nugget estimation", d)
		}
		pb := m.problem(yn, nil, nug, false)
		for j, t := range opt.Theta0 {
			if !(t > 0) || math.IsInf(t, 1) {
				return nil, fmt.Errorf("kriging: Theta0[%d] = %g, need > 0 and finite", j, t)
			}
		}
		// θ and λ are used as given, not through ln θ, so that Read
		// rebuilds a written model bit for bit.
		pb.nEval++
		st, err := pb.computeAt(append([]float64(nil), opt.Theta0...), nug)
		if err != nil {
			return nil, fmt.Errorf("kriging: fit at the given θ: %w", err)
		}
		m.st = st
		m.st.chol.LTo(&m.lChol)
		m.info.Objective, m.info.Evaluations, m.info.FullEvals = st.obj, 1, 1
		return m, nil
	}
	full := m.problem(yn, nil, nug, opt.EstimateNugget)
	search := full
	var stages []*problem // intermediate subsets, then full
	if opt.Subset > 0 && n > opt.Subset && opt.Subset > p {
		k := opt.Subset
		for 2*k < n {
			k *= 2
		}
		order := farthestPoints(m.x, n, d, k) // greedy: every prefix is space-filling
		search = m.problem(yn, sortedPrefix(order, opt.Subset), nug, opt.EstimateNugget)
		for k := 2 * opt.Subset; k < n; k *= 2 {
			stages = append(stages, m.problem(yn, sortedPrefix(order, k), nug, opt.EstimateNugget))
		}
	}
	m.info.SubsetSize = search.n

	// 1. Screen a fixed design of starts.
	t0 := time.Now()
	starts := [][]float64{}
	centre := make([]float64, q)
	for k := range q {
		centre[k] = 0.5 * (lo[k] + hi[k])
	}
	starts = append(starts, centre)
	if opt.Theta0 != nil {
		if len(opt.Theta0) != d {
			return nil, fmt.Errorf("kriging: Theta0 has %d values for %d coordinates", len(opt.Theta0), d)
		}
		s := append([]float64(nil), centre...)
		for j, t := range opt.Theta0 {
			if !(t > 0) {
				return nil, fmt.Errorf("kriging: Theta0[%d] = %g, need > 0", j, t)
			}
			s[j] = min(max(math.Log(t), lo[j]), hi[j])
		}
		starts = append(starts, s)
	}
	sob, err := design.NewSobol(q, false, 0)
	if err != nil {
		return nil, err
	}
	u := make([]float64, q)
	for i := 1; i <= opt.Starts; i++ { // point 0 is a corner of the box
		sob.Point(uint64(i), u)
		s := make([]float64, q)
		for k := range q {
			s[k] = lo[k] + u[k]*(hi[k]-lo[k])
		}
		starts = append(starts, s)
	}
	type cand struct {
		phi []float64
		v   float64
	}
	cands := make([]cand, len(starts))
	for i, s := range starts {
		cands[i] = cand{s, search.objective(s)}
	}
	m.info.StartsTried = len(starts)
	sort.SliceStable(cands, func(a, b int) bool { return cands[a].v < cands[b].v })
	m.info.ScreenSeconds = time.Since(t0).Seconds()
	if math.IsInf(cands[0].v, 1) {
		return nil, fmt.Errorf("kriging: the correlation matrix is not positive definite at any start (duplicate sites?)")
	}

	// 2. Local searches from the best starts.
	t0 = time.Now()
	best := cand{v: math.Inf(1)}
	var bestH *mat.SymDense // curvature at the best local optimum
	for i := 0; i < opt.Local && i < len(cands); i++ {
		if math.IsInf(cands[i].v, 1) {
			break
		}
		phi, v, h := localSearch(search, cands[i].phi, lo, hi, 200, nil)
		m.info.LocalOptima = append(m.info.LocalOptima, phi)
		m.info.LocalValues = append(m.info.LocalValues, v)
		if v < best.v-1e-9*(1+math.Abs(v)) { // ties go to the earlier start
			best = cand{phi, v}
			bestH = h
		}
	}
	m.info.LocalSeconds = time.Since(t0).Seconds()

	// 3. Refine on all sites.
	t0 = time.Now()
	phi := append([]float64(nil), best.phi...)
	if search != full {
		// Local searches that end in the same optimum end a few ulps
		// apart; the refinement on more sites is not converged to that
		// precision, so round the start to 1e-3 in ln θ and restart the
		// curvature estimate: the result is then a function of the
		// optimum, not of the start that found it.
		for k := range phi {
			phi[k] = math.Round(phi[k]*1e3) / 1e3
		}
		var h *mat.SymDense
		if len(stages) == 0 {
			h = bestH
		}
		for _, pb := range stages {
			phi, _, h = localSearch(pb, phi, lo, hi, opt.RefineIterations, h)
			m.info.Evaluations += pb.nEval
		}
		if opt.FullIterations > 0 {
			phi, _, _ = localSearch(full, phi, lo, hi, opt.FullIterations, h)
		}
	}
	st, err := full.state(phi)
	if err != nil {
		return nil, fmt.Errorf("kriging: final fit: %w", err)
	}
	m.info.RefineSeconds = time.Since(t0).Seconds()
	m.st = st
	m.st.chol.LTo(&m.lChol)
	m.info.Objective = st.obj
	m.info.Cond = st.chol.Cond()
	m.info.Evaluations += full.nEval + search.nEval
	m.info.FullEvals = full.nEval
	m.info.Failures = full.failures
	if search != full {
		m.info.Failures += search.failures
	}
	return m, nil
}

// problem builds the likelihood on the sites idx (nil: all).
func (m *Model) problem(yn []float64, idx []int, nug float64, est bool) *problem {
	d := m.d
	if idx == nil {
		idx = make([]int, m.n)
		for i := range idx {
			idx[i] = i
		}
	}
	pb := &problem{n: len(idx), d: d, p: m.p, corr: m.corr, estNug: est, nugget: nug,
		x: make([]float64, len(idx)*d), y: make([]float64, len(idx)),
		f: mat.NewDense(len(idx), m.p, nil), diff: make([]float64, d)}
	for r, i := range idx {
		copy(pb.x[r*d:(r+1)*d], m.x[i*d:(i+1)*d])
		pb.y[r] = yn[i]
		basis(m.order, pb.x[r*d:(r+1)*d], pb.f.RawRowView(r))
	}
	return pb
}

// localSearch minimises ln ψ by BFGS (Nocedal & Wright 2006, Alg. 6.1,
// with an Armijo backtracking line search and the update skipped when
// sᵀy ≤ 0) from phi, with a quadratic penalty outside the box [lo, hi]; it
// returns the best point found, clamped into the box, and its value. It
// stops after iters iterations, when a step changes ln ψ by less than
// 1e-9 (relative) or when the gradient's largest entry is below 1e-6.
func localSearch(pb *problem, phi, lo, hi []float64, iters int, h0 *mat.SymDense) ([]float64, float64, *mat.SymDense) {
	const w = 10.0
	q := len(phi)
	fv := func(x []float64) float64 {
		v := pb.objective(x)
		for k := range x {
			if e := x[k] - hi[k]; e > 0 {
				v += w * e * e
			} else if e := lo[k] - x[k]; e > 0 {
				v += w * e * e
			}
		}
		return v
	}
	// The gradient (the costly part: R⁻¹) only at accepted points.
	gr := func(x, g []float64) {
		pb.gradient(g, x)
		for k := range x {
			if e := x[k] - hi[k]; e > 0 {
				g[k] += 2 * w * e
			} else if e := lo[k] - x[k]; e > 0 {
				g[k] -= 2 * w * e
			}
		}
	}
	fg := func(x, g []float64) float64 {
		v := fv(x)
		if !math.IsInf(v, 1) {
			gr(x, g)
		}
		return v
	}
	x := append([]float64(nil), phi...)
	g := make([]float64, q)
	f := fg(x, g)
	if math.IsInf(f, 1) || anyNaN(g) {
		x = clampBox(phi, lo, hi)
		return x, pb.objective(x), nil
	}
	h := mat.NewSymDense(q, nil) // inverse Hessian approximation
	first := true
	if h0 != nil {
		h.CopySym(h0)
		first = false
	} else {
		resetIdentity(h)
	}
	dir, xn, gn := make([]float64, q), make([]float64, q), make([]float64, q)
	sv, yv := make([]float64, q), make([]float64, q)
	for it := 0; it < iters; it++ {
		if infNorm(g) < 1e-6 {
			break
		}
		mat.NewVecDense(q, dir).MulVec(h, mat.NewVecDense(q, g))
		var slope float64
		for k := range dir {
			dir[k] = -dir[k]
			slope += dir[k] * g[k]
		}
		if slope >= 0 { // not a descent direction: restart on the gradient
			for k := range dir {
				dir[k] = -g[k]
			}
			slope = -dotf(g, g)
			resetIdentity(h)
		}
		// Cap the first step at one unit of ln θ in the largest entry.
		step := 1.0
		if first {
			step = min(1, 1/infNorm(dir))
		}
		var fnew float64
		ok := false
		for ls := 0; ls < 30; ls++ {
			for k := range x {
				xn[k] = x[k] + step*dir[k]
			}
			fnew = fv(xn)
			if !math.IsInf(fnew, 1) && fnew <= f+1e-4*step*slope {
				gr(xn, gn)
				ok = !anyNaN(gn)
				break
			}
			step *= 0.3
		}
		if !ok {
			break
		}
		var sy float64
		for k := range x {
			sv[k] = xn[k] - x[k]
			yv[k] = gn[k] - g[k]
			sy += sv[k] * yv[k]
		}
		if first && sy > 0 { // scale the initial H (Nocedal & Wright Eq. 6.20)
			resetIdentity(h)
			h.ScaleSym(sy/dotf(yv, yv), h)
		}
		first = false
		if sy > 1e-12 {
			// H ← (I − ρsyᵀ)H(I − ρysᵀ) + ρssᵀ (Eq. 6.17).
			rho := 1 / sy
			hy := mat.NewVecDense(q, nil)
			hy.MulVec(h, mat.NewVecDense(q, yv))
			yhy := mat.Dot(hy, mat.NewVecDense(q, yv))
			for a := range q {
				for b := a; b < q; b++ {
					v := h.At(a, b) - rho*(hy.AtVec(a)*sv[b]+sv[a]*hy.AtVec(b)) + (rho*rho*yhy+rho)*sv[a]*sv[b]
					h.SetSym(a, b, v)
				}
			}
		}
		df := f - fnew
		copy(x, xn)
		copy(g, gn)
		f = fnew
		if df <= 1e-9*(1+math.Abs(f)) {
			break
		}
	}
	x = clampBox(x, lo, hi)
	return x, pb.objective(x), h
}

func resetIdentity(h *mat.SymDense) {
	q := h.SymmetricDim()
	for a := range q {
		for b := a; b < q; b++ {
			v := 0.0
			if a == b {
				v = 1
			}
			h.SetSym(a, b, v)
		}
	}
}

func dotf(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func infNorm(a []float64) float64 {
	var m float64
	for _, v := range a {
		m = max(m, math.Abs(v))
	}
	return m
}

func anyNaN(a []float64) bool {
	for _, v := range a {
		if math.IsNaN(v) {
			return true
		}
	}
	return false
}

func clampBox(x, lo, hi []float64) []float64 {
	out := make([]float64, len(x))
	for k := range x {
		out[k] = min(max(x[k], lo[k]), hi[k])
	}
	return out
}

// farthestPoints picks k of the n sites greedily, each the farthest from
// those already chosen (Gonzalez 1985), starting with the site nearest the
// centroid: a space-filling subset whatever the order of the data, in
// the order chosen (so every prefix is one too).
func farthestPoints(x []float64, n, d, k int) []int {
	dist := make([]float64, n)
	first, bestD := 0, math.Inf(1)
	for i := range n { // the data are normalised: the centroid is 0
		var s float64
		for j := range d {
			s += x[i*d+j] * x[i*d+j]
		}
		if s < bestD {
			first, bestD = i, s
		}
	}
	for i := range dist {
		dist[i] = math.Inf(1)
	}
	idx := []int{first}
	cur := first
	for len(idx) < k {
		next, far := -1, -1.0
		for i := range n {
			var s float64
			for j := range d {
				t := x[i*d+j] - x[cur*d+j]
				s += t * t
			}
			if s < dist[i] {
				dist[i] = s
			}
			if dist[i] > far {
				next, far = i, dist[i]
			}
		}
		if far <= 0 {
			break
		}
		idx = append(idx, next)
		cur = next
	}
	return idx
}

// sortedPrefix is the first k indices of order, sorted.
func sortedPrefix(order []int, k int) []int {
	out := append([]int(nil), order[:min(k, len(order))]...)
	sort.Ints(out)
	return out
}

// Dim is the number of inputs.
func (m *Model) Dim() int { return m.d }

// Info describes the fit.
func (m *Model) Info() Info { return m.info }

// Theta is the fitted θ in normalised coordinates (inputs divided by their
// standard deviation over the sites).
func (m *Model) Theta() []float64 { return append([]float64(nil), m.st.theta...) }

// Nugget is λ (relative to the process variance σ²).
func (m *Model) Nugget() float64 { return m.st.nugget }

// Sigma2 is the process variance σ² in the response's units squared.
func (m *Model) Sigma2() float64 { return m.st.sigma2 * m.yStd * m.yStd }

// Beta is the generalised least-squares β of the normalised response.
func (m *Model) Beta() []float64 { return append([]float64(nil), m.st.beta...) }

// Box is the bounding box of the training sites.
func (m *Model) Box() (lo, hi []float64) {
	return append([]float64(nil), m.lo...), append([]float64(nil), m.hi...)
}

// maxRegressionCond bounds the condition number of the regression matrix
// F (n sites × p functions, on the normalised sites).
const maxRegressionCond = 1e12

// checkRegression refuses a regression the sites do not determine: the
// regression matrix F (n sites × p functions, on the normalised sites)
// must have full rank, or the generalised least-squares β is not
// determined (audit 15: five parameter points for the six quadratic
// functions of two parameters gave errors 1e13 times the output, the
// search blaming the correlation matrix, "duplicate sites?"). DACE's
// dacefit (Lophaven, Nielsen & Søndergaard 2002) refuses F with a
// condition number above 1e15; kinfer refuses above 1e12, where β has
// lost all but four digits. The message says why: an input with too few
// distinct values for the order (a condition measured at two lengths
// leaves its square undetermined: audit 16), or too few distinct
// parameter points (the first params coordinates; all when 0).
func (m *Model) checkRegression(params int, names []string) error {
	if m.p == 1 {
		return nil
	}
	rank, cond, err := regressionRank(m.order, m.x, m.n, m.d)
	if err != nil || rank == m.p {
		return err
	}
	name := func(j int) string {
		if j < len(names) && names[j] != "" {
			return names[j]
		}
		return fmt.Sprintf("coordinate %d", j+1)
	}
	var few []string
	for j := range m.d {
		vals := map[float64]bool{}
		for i := range m.n {
			vals[m.x[i*m.d+j]] = true
		}
		if len(vals) <= m.order {
			few = append(few, fmt.Sprintf("%s takes %d values", name(j), len(vals)))
		}
	}
	if len(few) > 0 {
		return fmt.Errorf("kriging: a regression of order %d needs at least %d distinct values of every input, but %s: its terms in them are not determined (rank %d of %d): use a lower regression order (--regression %d)", m.order, m.order+1, strings.Join(few, ", "), rank, m.p, m.order-1)
	}
	if params <= 0 || params > m.d {
		params = m.d
	}
	distinct := map[string]bool{}
	for i := range m.n {
		distinct[fmt.Sprint(m.x[i*m.d:i*m.d+params])] = true
	}
	return fmt.Errorf("kriging: the design's %d distinct points of its %d parameters do not determine the %d regression functions of order %d in %d inputs (rank %d, condition number %.2g): use a lower regression order (--regression %d) or a design of more points", len(distinct), params, m.p, m.order, m.d, rank, cond, m.order-1)
}

// regressionRank is the numerical rank (singular values above the
// largest / maxRegressionCond) and condition number of the regression
// matrix of order at the n sites x (n × d, row-major).
func regressionRank(order int, x []float64, n, d int) (int, float64, error) {
	p := nBasis(order, d)
	f := mat.NewDense(n, p, nil)
	for i := range n {
		basis(order, x[i*d:(i+1)*d], f.RawRowView(i))
	}
	var svd mat.SVD
	if !svd.Factorize(f, mat.SVDNone) {
		return 0, 0, fmt.Errorf("kriging: the regression matrix's singular values did not converge")
	}
	sv := svd.Values(nil)
	rank := 0
	for _, v := range sv {
		if v > sv[0]/maxRegressionCond {
			rank++
		}
	}
	return rank, sv[0] / sv[len(sv)-1], nil
}
