package builtin

import (
	"sort"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/builtin/likelihood/gaussian"
	"github.com/kinfer/kinfer/builtin/likelihood/nmse"
	"github.com/kinfer/kinfer/builtin/likelihood/strainband"
	"github.com/kinfer/kinfer/builtin/methods/adam"
	"github.com/kinfer/kinfer/builtin/methods/anneal"
	"github.com/kinfer/kinfer/builtin/methods/gaussnewton"
	"github.com/kinfer/kinfer/builtin/methods/levmar"
	"github.com/kinfer/kinfer/builtin/methods/metropolis"
	"github.com/kinfer/kinfer/builtin/methods/montecarlo"
	"github.com/kinfer/kinfer/builtin/methods/tmcmc"
	"github.com/kinfer/kinfer/builtin/models/arm"
	"github.com/kinfer/kinfer/builtin/models/foot"
	"github.com/kinfer/kinfer/builtin/models/knee"
	"github.com/kinfer/kinfer/builtin/models/kneewear"
	"github.com/kinfer/kinfer/builtin/models/ligament"
	"github.com/kinfer/kinfer/builtin/models/line"
	"github.com/kinfer/kinfer/builtin/models/nist"
	"github.com/kinfer/kinfer/builtin/models/tkrcontact"
	"github.com/kinfer/kinfer/builtin/models/twobardirect"
	"github.com/kinfer/kinfer/builtin/models/twobarindirect"
)

// Entry is one built-in component: its self-description and constructor.
type Entry[T any] struct {
	Spec abi.Spec
	New  abi.Constructor[T]
}

// Models, Likelihoods and Methods are the built-ins by name.
var (
	Models = map[string]Entry[abi.Model]{
		"arm":      {arm.Spec, arm.New},
		"foot":     {foot.Spec, foot.New},
		"knee":     {knee.Spec, knee.New},
		"kneewear": {kneewear.Spec, kneewear.New},
		"ligament": {ligament.Spec, ligament.New},
		"line":     {line.Spec, line.New},
		"nist":     {nist.Spec, nist.New},

		"tkrcontact":      {tkrcontact.Spec, tkrcontact.New},
		"twobar-direct":   {twobardirect.Spec, twobardirect.New},
		"twobar-indirect": {twobarindirect.Spec, twobarindirect.New},
	}
	Likelihoods = map[string]Entry[abi.Likelihood]{
		"gaussian":   {gaussian.Spec, gaussian.New},
		"nmse":       {nmse.Spec, nmse.New},
		"strainband": {strainband.Spec, strainband.New},
	}
	Methods = map[string]Entry[abi.Method]{
		"adam":        {adam.Spec, adam.New},
		"anneal":      {anneal.Spec, anneal.New},
		"gaussnewton": {gaussnewton.Spec, gaussnewton.New},
		"levmar":      {levmar.Spec, levmar.New},
		"metropolis":  {metropolis.Spec, metropolis.New},
		"montecarlo":  {montecarlo.Spec, montecarlo.New},
		"tmcmc":       {tmcmc.Spec, tmcmc.New},
	}
)

// Names returns the sorted keys of a registry map.
func Names[T any](m map[string]Entry[T]) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
