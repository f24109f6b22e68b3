package footcontact

import (
	"fmt"

	rb "github.com/kinfer/kinfer/builtin/rigidbody"
)

// Grid size and element count (Jackson 2016: "This process reduced the
// number of grid elements from 55 (5×11 grid) down to 38").
const (
	GridAP = 11 // elements along the foot
	GridML = 5  // elements across the foot
	NElem  = 38 // elements inside the sole outline
)

// Side is the right or left foot.
type Side int

const (
	Right Side = iota
	Left
)

func (s Side) String() string {
	if s == Left {
		return "left"
	}
	return "right"
}

// Dimensions of the foot: the marker layout that bounds the grid. The
// defaults are those of an adult sneaker (size EU 42) and of the marker set
// of Jackson 2016 (heel and toe-tip markers at the same height).
type Dimensions struct {
	Length      float64 // heel marker to toe-tip marker, AP [m]
	Width       float64 // medial to lateral toe marker, ML [m]
	MarkerH     float64 // height of the heel and toe markers above the sole [m]
	MedialToeU  float64 // AP position of the medial toe marker, fraction of Length
	LateralToeU float64 // AP position of the lateral toe marker, fraction of Length
}

// DefaultDimensions is the foot of the synthetic subject.
var DefaultDimensions = Dimensions{Length: 0.27, Width: 0.10, MarkerH: 0.03, MedialToeU: 0.695, LateralToeU: 0.615}

// Outline is the sole outline of a right foot in grid coordinates: u along
// the foot (0 at the heel marker, 1 at the toe-tip marker), v across it (−½
// at the medial toe marker, +½ at the lateral one). It is our own tracing of
// a sneaker sole: a rounded heel, a medial arch at u ≈ 0.4–0.5, the widest
// part at the metatarsal heads and a toe box shifted medially. 38 of the
// 5×11 grid centres fall inside it, as in Jackson 2016 (Fig. 1). A left
// foot mirrors it.
var Outline = [][2]float64{
	// lateral edge, heel to toe
	{-0.03, 0}, {0, 0.22}, {0.1, 0.3}, {0.3, 0.37}, {0.5, 0.47}, {0.65, 0.52}, {0.8, 0.5}, {0.9, 0.32}, {0.97, 0.12}, {1.02, 0},
	// medial edge, toe to heel
	{0.95, -0.3}, {0.85, -0.5}, {0.7, -0.52}, {0.58, -0.3}, {0.45, -0.1}, {0.25, -0.28}, {0.1, -0.3}, {0, -0.22},
}

// inside reports whether (u, v) is inside the polygon (ray casting).
func inside(poly [][2]float64, u, v float64) bool {
	in := false
	for i, j := 0, len(poly)-1; i < len(poly); j, i = i, i+1 {
		ui, vi, uj, vj := poly[i][0], poly[i][1], poly[j][0], poly[j][1]
		if (vi > v) != (vj > v) && u < (uj-ui)*(v-vi)/(vj-vi)+ui {
			in = !in
		}
	}
	return in
}

// Element is one contact element: its grid cell and where it sits.
type Element struct {
	Row, Col int     // grid position: Col along the foot (0 at the heel), Row across (0 medial)
	U, V     float64 // grid coordinates of its centre
	// Pos is its centre in HF coordinates in the static pose (on the
	// floor-level plane of the sole).
	Pos      rb.Vec3
	Forefoot bool // fixed in the FF (anterior to the toes axis)
}

// Foot is the geometry of one foot: elements, markers and toes axis, in
// HF coordinates of the static pose (origin at the heel marker, X
// anterior, Y up, Z to the right).
type Foot struct {
	Side Side
	Dim  Dimensions
	Elem [NElem]Element
	// AxisPoint and Axis are a point on the toes axis (on the floor) and its
	// unit direction, oriented so that a positive toe angle lifts the toes.
	AxisPoint, Axis rb.Vec3
	// Markers are the dynamic markers of Jackson 2016: the heel (HF), the
	// tip of the second toe (FF), the superior HF over the laces and the
	// inferior lateral HF just above the sole.
	Markers [NMarkers]Marker
}

// NMarkers is the number of dynamic foot markers.
const NMarkers = 4

// Marker is a marker fixed in a segment.
type Marker struct {
	Name     string
	Pos      rb.Vec3 // HF coordinates in the static pose
	Forefoot bool
}

// MarkerNames are the dynamic markers' names, without the side prefix.
var MarkerNames = [NMarkers]string{"Heel", "Toe", "SupHF", "LatHF"}

// NewFoot builds the geometry of one foot: the 5×11 grid over the marker
// rectangle, clipped to the outline, each element assigned to a segment by
// its side of the toes axis.
func NewFoot(side Side, d Dimensions) (*Foot, error) {
	if !(d.Length > 0 && d.Width > 0 && d.MarkerH >= 0) {
		return nil, fmt.Errorf("footcontact: bad dimensions %+v", d)
	}
	f := &Foot{Side: side, Dim: d}
	mirror := 1.0 // z = mirror·v·Width: lateral is +Z on the right foot
	if side == Left {
		mirror = -1
	}
	sole := -d.MarkerH
	pt := func(u, v float64) rb.Vec3 { return rb.Vec3{u * d.Length, sole, mirror * v * d.Width} }
	// Toes axis: through the medial and lateral toe markers, on the floor.
	med, lat := pt(d.MedialToeU, -0.5), pt(d.LateralToeU, 0.5)
	ax := lat.Sub(med)
	if ax[2] < 0 {
		ax = ax.Scale(-1)
	}
	f.Axis = ax.Scale(1 / ax.Norm())
	f.AxisPoint = med
	// axisU is the AP position of the axis at v.
	axisU := func(v float64) float64 {
		return d.MedialToeU + (d.LateralToeU-d.MedialToeU)*(v+0.5)
	}
	n := 0
	for c := 0; c < GridAP; c++ {
		u := (float64(c) + 0.5) / GridAP
		for r := 0; r < GridML; r++ {
			v := -0.5 + (float64(r)+0.5)/GridML
			if !inside(Outline, u, v) {
				continue
			}
			if n == NElem {
				return nil, fmt.Errorf("footcontact: more than %d grid centres inside the outline", NElem)
			}
			f.Elem[n] = Element{Row: r, Col: c, U: u, V: v, Pos: pt(u, v), Forefoot: u > axisU(v)}
			n++
		}
	}
	if n != NElem {
		return nil, fmt.Errorf("footcontact: %d grid centres inside the outline, want %d", n, NElem)
	}
	m := func(x, y, z float64) rb.Vec3 { return rb.Vec3{x, y, mirror * z} }
	f.Markers = [NMarkers]Marker{
		{Name: MarkerNames[0], Pos: m(0, 0, 0)},
		{Name: MarkerNames[1], Pos: m(d.Length, 0, 0), Forefoot: true},
		{Name: MarkerNames[2], Pos: m(0.45*d.Length, 0.05, 0)},
		{Name: MarkerNames[3], Pos: m(0.3*d.Length, -0.015, 0.45*d.Width)},
	}
	return f, nil
}
