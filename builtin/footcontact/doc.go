// Package footcontact is the two-segment foot–ground contact model of
// Jackson, Hass & Fregly (2016, "Development of a subject-specific
// foot-ground contact model for walking", J. Biomech. Eng. 138(9),
// 091002): a hindfoot (HF) and a forefoot (FF) joined by a pin at the toes
// axis, with a grid of viscoelastic contact elements under the sole.
//
// Geometry (Jackson 2016, "Foot-Ground Contact Model Development", Fig. 1):
// a uniform 5 × 11 grid (5 across, 11 along the foot) spans the rectangle
// bounded by the heel and toe-tip markers (AP) and the medial and lateral
// toe markers (ML) projected on the floor; elements whose centres fall
// outside the sole outline are dropped, leaving 38. The outline is ours
// (the paper traced the subject's sneaker with a marker wand): a shoe
// sole polygon given in Outline, chosen so that exactly 38 centres fall
// inside, as in the paper. Elements anterior to the toes axis (the line
// through the medial and lateral toe markers, moved to the floor) are fixed
// in the FF, the others in the HF.
//
// Kinematics: 7 degrees of freedom, q = (tx, ty, tz, rz, rx, ry, toe): the
// HF origin (the heel marker) in the lab, the HF orientation as a
// body-fixed 3-1-2 (Z, then X, then Y) rotation sequence, and toe flexion
// about the toes axis (positive lifts the toes). Lab axes follow OpenSim:
// X anterior, Y up, Z to the right; the floor is Y = 0.
//
// Per element (Jackson 2016 Eq. 1–2):
//
//	F_i = k_i·(y_i − y0)·(1 + c_i·ẏ_i)                     (Eq. 1)
//	f_i = F_i·[μd·tanh(vs/vl) + (μs−μd)·e^{−((vs−vl)/(2vl))²}
//	           − (μs−μd)·e^{−((vs+vl)/(2vl))²} + μv·vs/vl]  (Eq. 2)
//
// with y_i the penetration of element i measured into the floor (y_i = −
// height of its centre, so ẏ_i > 0 while compressing), y0 the common
// resting length, vs the horizontal slip speed and vl = 0.01 m/s the
// latching velocity. F_i acts when y_i > y0 and never pulls (a negative
// factor (1 + c·ẏ) during fast release gives 0, as in Hunt & Crossley
// 1975). The friction force acts opposite to the slip velocity.
//
// The net force and moment on each segment about its origin (the heel
// marker for the HF, the toe marker for the FF) and the six ground reaction
// quantities of each foot (three forces, the centre of pressure on the
// floor in AP and ML, the free moment about the vertical) are sums of the
// element loads by the principle of replacement.
package footcontact
