package muscle

// Prepared is a muscle with what TensionPartials computes from its
// parameters alone done once: L0 and the reciprocals of L0, L0·vmax and
// vmax, and the breakpoints and reciprocal widths of the curves FL, FV and
// FP. Evaluating many states of one muscle (a dataset's rows) then costs
// multiplications where Muscle.TensionPartials divides (about ten
// divisions per call). Its results equal Muscle.TensionPartials up to
// rounding (a/b against a·(1/b)); the guards are MuJoCo's, as there.
type Prepared struct {
	Force, FPMax float64

	l0, invL0, invL0V, invVMax float64 // L0, 1/L0, 1/(L0·vmax), 1/vmax (guarded)
	range0, lr0                float64

	// FL: lmin, a = ½(lmin+1), b = ½(1+lmax), lmax and the reciprocals of
	// a − lmin, 1 − a, b − 1, lmax − b.
	lmin, a, b, lmax         float64
	inAL, in1A, inB1, inLMax float64

	fvmax, y, invY float64 // FV: fvmax, y = fvmax − 1, 1/y
}

// Prepare returns the prepared form of m.
func (m Muscle) Prepare() Prepared {
	L0 := m.L0()
	a := 0.5 * (m.LMin + 1)
	b := 0.5 * (1 + m.LMax)
	return Prepared{
		Force: m.Force, FPMax: m.FPMax,
		l0: L0, invL0: 1 / guard(L0), invL0V: 1 / guard(L0*m.VMax), invVMax: 1 / guard(m.VMax),
		range0: m.Range0, lr0: m.LR0,
		lmin: m.LMin, a: a, b: b, lmax: m.LMax,
		inAL: 1 / guard(a-m.LMin), in1A: 1 / guard(1-a), inB1: 1 / guard(b-1), inLMax: 1 / guard(m.LMax-b),
		fvmax: m.FVMax, y: m.FVMax - 1, invY: 1 / guard(m.FVMax-1),
	}
}

// TensionPartials is Muscle.TensionPartials (the same formulas, the same
// pieces of FL, FV and FP) with the prepared constants.
func (p *Prepared) TensionPartials(length, vel, act float64) (T float64, d Partials) {
	L := p.range0 + (length-p.lr0)*p.invL0
	V := vel * p.invL0V

	var fl, dfl float64 // FL (curves.go)
	switch {
	case L < p.lmin || L > p.lmax:
	case L <= p.a:
		x := (L - p.lmin) * p.inAL
		fl, dfl = 0.5*x*x, x*p.inAL
	case L <= 1:
		x := (1 - L) * p.in1A
		fl, dfl = 1-0.5*x*x, x*p.in1A
	case L <= p.b:
		x := (L - 1) * p.inB1
		fl, dfl = 1-0.5*x*x, -x*p.inB1
	default:
		x := (p.lmax - L) * p.inLMax
		fl, dfl = 0.5*x*x, -x*p.inLMax
	}
	var fv, dfv float64 // FV
	switch {
	case V <= -1:
	case V <= 0:
		fv, dfv = (V+1)*(V+1), 2*(V+1)
	case V <= p.y:
		fv, dfv = p.fvmax-(p.y-V)*(p.y-V)*p.invY, 2*(p.y-V)*p.invY
	default:
		fv = p.fvmax
	}
	var fp, dfp float64 // FP
	switch {
	case L <= 1:
	case L <= p.b:
		x := (L - 1) * p.inB1
		fp, dfp = 0.5*x*x, x*p.inB1
	default:
		fp, dfp = 0.5+(L-p.b)*p.inB1, p.inB1
	}
	F := p.Force
	flfv := fl * fv
	d.DForce = flfv*act + p.FPMax*fp
	T = F * d.DForce
	dTdL := F * (dfl*fv*act + p.FPMax*dfp)
	dTdV := F * fl * dfv * act
	d.DLength = dTdL * p.invL0
	d.DVel = dTdV * p.invL0V
	d.DAct = F * flfv
	d.DL0 = -(dTdL*L + dTdV*V) * p.invL0
	d.DVMax = -dTdV * V * p.invVMax
	return T, d
}
