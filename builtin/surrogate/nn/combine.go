package nn

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Combine joins the members of one ensemble trained separately (Config.
// Member, e.g. one process or machine per member) into the ensemble a
// single training with the same Config would have made: the networks in
// member order and the weights from their validation losses, computed as
// Train does, so the result is the same bit for bit. The parts must come
// from the same training — equal configurations apart from Member and
// Members, equal normalisation and training box — and hold every member
// 1 … n exactly once, n being the number of networks given; the result
// has Members = n. A member's network does not depend on Members (only on
// the seed and its number), so an ensemble grows: a file of members 1 … n
// and member n+1 trained later (Members = n+1, Member = n+1) combine into
// the ensemble of one training with Members = n+1. A part may itself hold
// several members (a complete ensemble is returned as it is).
func Combine(parts ...*Ensemble) (*Ensemble, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("nn: combine: no ensembles")
	}
	first := parts[0]
	if first.Config == nil {
		return nil, fmt.Errorf("nn: combine: part 1 has no training configuration (built by hand?)")
	}
	base := *first.Config
	base.Member, base.Members = 0, 0
	type member struct {
		net  *Net
		info TrainInfo
	}
	var ms []member
	for p, e := range parts {
		if e.Config == nil {
			return nil, fmt.Errorf("nn: combine: part %d has no training configuration", p+1)
		}
		if len(e.Nets) == 0 || len(e.Info) != len(e.Nets) {
			return nil, fmt.Errorf("nn: combine: part %d has %d networks and %d training records", p+1, len(e.Nets), len(e.Info))
		}
	}
	validated := first.Info[0].ValidationLoss > 0
	for p, e := range parts {
		c := *e.Config
		c.Member, c.Members = 0, 0
		if !sameConfig(&c, &base) {
			return nil, fmt.Errorf("nn: combine: part %d was trained with another configuration than part 1: %s", p+1, configDiff(&c, &base))
		}
		if !slices.Equal(e.InputLo, first.InputLo) || !slices.Equal(e.InputHi, first.InputHi) {
			return nil, fmt.Errorf("nn: combine: part %d has another training box than part 1 (other training data)", p+1)
		}
		for k, n := range e.Nets {
			f := first.Nets[0]
			if !slices.Equal(n.Sizes, f.Sizes) || !slices.Equal(n.XMean, f.XMean) || !slices.Equal(n.XSD, f.XSD) ||
				!slices.Equal(n.YMean, f.YMean) || !slices.Equal(n.YSD, f.YSD) {
				return nil, fmt.Errorf("nn: combine: part %d network %d has other layer sizes or normalisation than part 1 (other training data)", p+1, k+1)
			}
			info := e.Info[k]
			if info.Member < 1 || info.Member > e.Config.Members {
				return nil, fmt.Errorf("nn: combine: part %d network %d does not say which member it is (member %d of %d; train members with --member)", p+1, k+1, info.Member, e.Config.Members)
			}
			if (info.ValidationLoss > 0) != validated {
				return nil, fmt.Errorf("nn: combine: part %d network %d was validated and part 1 network 1 not, or the reverse", p+1, k+1)
			}
			ms = append(ms, member{n, info})
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].info.Member < ms[j].info.Member })
	for i, m := range ms {
		if m.info.Member != i+1 {
			if i > 0 && ms[i-1].info.Member == m.info.Member {
				return nil, fmt.Errorf("nn: combine: member %d is given twice", m.info.Member)
			}
			return nil, fmt.Errorf("nn: combine: member %d is missing (%d networks given: members 1 … %d are needed)", i+1, len(ms), len(ms))
		}
	}
	c := base
	c.Members = len(ms)
	c.Hidden = slices.Clone(base.Hidden)
	e := &Ensemble{Nets: make([]*Net, len(ms)), Weights: make([]float64, len(ms)), Info: make([]TrainInfo, len(ms)), Config: &c,
		InputLo: first.InputLo, InputHi: first.InputHi}
	for i, m := range ms {
		e.Nets[i], e.Info[i] = m.net, m.info
	}
	e.weigh(validated)
	return e, e.check()
}

// configDiff names the fields of two configurations a file keeps that
// differ, with their values (audit 16: two raw Go structs were printed).
func configDiff(a, b *Config) string {
	var ma, mb map[string]any
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if json.Unmarshal(ja, &ma) != nil || json.Unmarshal(jb, &mb) != nil {
		return "unreadable configurations"
	}
	keys := make([]string, 0, len(ma)+len(mb))
	for k := range ma {
		keys = append(keys, k)
	}
	for k := range mb {
		if _, ok := ma[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var diffs []string
	for _, k := range keys {
		va, _ := json.Marshal(ma[k])
		vb, _ := json.Marshal(mb[k])
		if !bytes.Equal(va, vb) {
			diffs = append(diffs, fmt.Sprintf("%s %s here, %s in part 1", k, va, vb))
		}
	}
	return strings.Join(diffs, "; ") + " (train every member with the same flags but --member)"
}

// sameConfig compares the fields of two configurations a file keeps: their
// JSON, which leaves out Progress and Deadline and takes in any field added
// to Config later.
func sameConfig(a, b *Config) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ja, jb)
}
