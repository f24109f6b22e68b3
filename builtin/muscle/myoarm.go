package muscle

// MyoArm returns the eight arm muscles of MyoSuite's MyoArm that Diff-MSM
// actuates (Zhou et al., Sec. III: DELT1, DELT3, TRIlong, TRIlat, BIClong,
// BICshort, BRA, BRD), with the parameters listed in docs/REFERENCES.md
// ("Muscles", MyoArm table): all with lmin 0, lmax 1.8, vmax 10, fvmax 1.4,
// scale 1. A fresh slice is returned on each call.
//
// The values are as REFERENCES.md gives them (six significant figures);
// they have not been re-read from the MyoSuite XML here.
func MyoArm() []Muscle {
	row := func(name string, r0, r1, force, fpmax, lr0, lr1 float64) Muscle {
		return Muscle{
			Name: name, LR0: lr0, LR1: lr1,
			Range0: r0, Range1: r1, Force: force, Scale: 1,
			LMin: 0, LMax: 1.8, VMax: 10, FPMax: fpmax, FVMax: 1.4,
		}
	}
	return []Muscle{
		//   name        range0    range1   force N  fpmax     lengthrange m
		row("DELT1", 0.33707, 1.53316, 1051.85, 0.518315, 0.123363, 0.240922),
		row("DELT3", 0.236598, 1.33978, 163.23, 0.873711, 0.0701623, 0.192737),
		row("TRIlong", 0.692589, 1.5232, 670.069, 1.87109, 0.244705, 0.39348),
		row("TRIlat", 0.53832, 1.29451, 682.224, 1.16899, 0.16661, 0.214704),
		row("BIClong", 0.297699, 1.6, 421.718, 1.1404, 0.314572, 0.480222),
		row("BICshort", 0.486445, 1.50858, 270.82, 1.80875, 0.268189, 0.449579),
		row("BRA", 0.526201, 1.21956, 1168.76, 0.920725, 0.105976, 0.14593),
		row("BRD", 0.130305, 1.37938, 272.486, 0.93764, 0.200364, 0.32774),
	}
}
