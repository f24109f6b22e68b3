// Package twobarindirect is the builtin model "twobar-indirect": the
// indirect temporal identification of Gouveia, Lemosse, Pagnacco & Souza
// de Cursi ("Temporal identification in a flexible multibody system:
// application to biomechanics", Sec. 5, Eq. 14–16) on their two-bar system
// (Sec. 6, Fig. 1; package builtin/flexmb/twobar).
//
// Parameters: the spring constants p = [k1, kt1, k3, kt3]. Condition: the
// time t [s] of a row. Outputs: the simulated state at t, released from π/6
// at t = 0 and integrated by HHT-α with parameters p: positions x1 … th5,
// velocities vx1 … vth5, accelerations ax1 … ath5. One evaluation
// integrates once, up to the latest t of the dataset. A study compares
// them with data through a gaussian likelihood: Eq. 15 observes a reduced
// set of nodal positions (a dataset with columns x2, y4, x5, y5, as the
// paper's example), Eq. 16 the whole state (all 45 columns).
//
// Settings: the integration step (s; every t must be a whole number of
// steps, at most MaxSteps, else the evaluation is Invalid) and HHT's α. A step whose Newton
// iterations fail is a Failed evaluation. The host differences the
// outputs for Jacobians (Gouveia use central differences; studies set
// jacobian = "central").
package twobarindirect
