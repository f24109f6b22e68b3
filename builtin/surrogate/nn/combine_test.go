package nn

import (
	"bytes"
	"strings"
	"testing"
)

// Members trained one at a time (Config.Member) and joined by Combine are
// the ensemble of one training with the same configuration, bit for bit:
// the same networks in the same order and the same weights, so the same
// file. A wrong stream per member, a wrong order or weights computed
// another way would change the bytes.
func TestCombineEqualsOneTraining(t *testing.T) {
	cfg := smallConfig()
	cfg.Hidden = []int{16, 8}
	cfg.Epochs = 2
	cfg.Members = 3
	train, val := gridData(120, 3), gridData(40, 5)
	whole, err := Train(cfg, train, val)
	if err != nil {
		t.Fatal(err)
	}
	var parts []*Ensemble
	for _, k := range []int{3, 1, 2} { // any order
		c := cfg
		c.Member = k
		p, err := Train(c, train, val)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Nets) != 1 || p.Info[0].Member != k {
			t.Fatalf("Member %d: %d networks, member %d", k, len(p.Nets), p.Info[0].Member)
		}
		parts = append(parts, p)
	}
	joined, err := Combine(parts...)
	if err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	if err := whole.Write(&a, Provenance{Seed: cfg.Seed}); err != nil {
		t.Fatal(err)
	}
	if err := joined.Write(&b, Provenance{Seed: cfg.Seed}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("combined ensemble differs from one training (weights %v vs %v)", joined.Weights, whole.Weights)
	}
	// An ensemble grows: members 1 and 2 of a two-member training and
	// member 3 trained later as member 3 of 3 are the three-member
	// ensemble, bit for bit.
	var grown []*Ensemble
	for _, k := range []int{1, 2} {
		c := cfg
		c.Members, c.Member = 2, k
		p, err := Train(c, train, val)
		if err != nil {
			t.Fatal(err)
		}
		grown = append(grown, p)
	}
	two, err := Combine(grown...)
	if err != nil || two.Config.Members != 2 {
		t.Fatalf("two members: %v", err)
	}
	g, err := Combine(two, parts[0]) // parts[0] is member 3 of 3
	if err != nil {
		t.Fatal(err)
	}
	var c bytes.Buffer
	if err := g.Write(&c, Provenance{Seed: cfg.Seed}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), c.Bytes()) {
		t.Fatalf("grown ensemble differs from one training of three")
	}
	// A complete ensemble combines to itself.
	if again, err := Combine(whole); err != nil || again.Weights[2] != whole.Weights[2] {
		t.Fatalf("a complete ensemble: %v", err)
	}

	// What Combine refuses, with the reason.
	other := cfg
	other.Member, other.Seed = 2, cfg.Seed+1
	reseeded, _ := Train(other, train, val)
	unvalidated := cfg
	unvalidated.Member = 2
	noVal, _ := Train(unvalidated, train, nil)
	otherData := cfg
	otherData.Member = 2
	moved, _ := Train(otherData, gridData(120, 4), val)
	noInfo := *parts[1] // a file whose "training" records were removed: once a panic
	noInfo.Info = nil
	for _, c := range []struct {
		name  string
		parts []*Ensemble
		want  string
	}{
		{"no training records first", []*Ensemble{&noInfo, parts[0], parts[2]}, "part 1 has 1 networks and 0 training records"},
		{"no training records", []*Ensemble{parts[0], &noInfo, parts[2]}, "part 2 has 1 networks and 0 training records"},
		{"missing", parts[:2], "member 2 is missing"},
		{"twice", []*Ensemble{parts[0], parts[1], parts[2], parts[1]}, "member 1 is given twice"},
		{"seed", []*Ensemble{parts[1], reseeded, parts[0]}, "another configuration than part 1: Seed 43 here, 42 in part 1 (train every member"},
		{"validation", []*Ensemble{parts[1], noVal, parts[0]}, "validated"},
		{"data", []*Ensemble{parts[1], moved, parts[0]}, "training"},
	} {
		if _, err := Combine(c.parts...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	bad := cfg
	bad.Member = 4
	if _, err := Train(bad, train, val); err == nil {
		t.Error("Member 4 of 3 accepted")
	}
}
