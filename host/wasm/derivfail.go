package wasm

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/internal/guesttext"
)

// failTally tallies the calls of a plugin's exports that returned status
// 1 or 2 — a model's derivative exports (kinfer_model_jacobian,
// kinfer_model_vjp, kinfer_model_forward, kinfer_model_pullback; a call
// each), or its eval exports (a point each) — with one of the guest's
// kinfer_last_error messages: the first in sort order of those it gave, so
// that the record does not depend on which worker failed last (ABI.md §3:
// the host adds it). Such a status is a point's, not a fault: the point
// keeps its value and goes without a derivative, or fails, so without this
// tally the guest's reason would be lost.
type failTally struct {
	mu    sync.Mutex
	calls map[export]int
	fails map[export]map[abi.Status]int
	last  map[export]string
	// nonFinite counts the points an eval export returned with status 0
	// and a NaN or ±Inf output (status non-finite, set by the host), with
	// one of them described (the first in sort order).
	nonFinite map[export]int
	nfWhat    map[export]string
	nfAt      map[export][2]int // the described one's row and output
	// batchTraps counts the batched calls of an eval export that trapped
	// (an unwritten output or status, a guest trap) while each of their
	// points then succeeded alone: the batch path breaks ABI.md §2 and the
	// host used the single-point results. batchWhat is one such fault, the
	// first in sort order.
	batchTraps map[export]int
	batchWhat  map[export]string
}

// addBatchTrap tallies one batched call of export e that trapped while
// each of its points succeeded alone; what is the batch's fault.
func (d *failTally) addBatchTrap(e export, what string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.batchTraps == nil {
		d.batchTraps, d.batchWhat = map[export]int{}, map[export]string{}
	}
	d.batchTraps[e]++
	if w, ok := d.batchWhat[e]; !ok || what < w {
		d.batchWhat[e] = what
	}
}

// batchTrap is the first batch fault tallied (addBatchTrap) of any
// export, or "".
func (d *failTally) batchTrap() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	for e := export(0); e < numExports; e++ {
		if d.batchTraps[e] > 0 {
			return d.batchWhat[e]
		}
	}
	return ""
}

// batchNote is one line per export with batch faults (addBatchTrap), or
// "".
func (d *failTally) batchNote() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var parts []string
	for e := export(0); e < numExports; e++ {
		if n := d.batchTraps[e]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s faulted in %d batched calls whose points then each succeeded alone: a batch must give each point what a call of that point alone gives (ABI.md §2), or, if it ran out of memory, needs a larger memory_mib; the results are the single-point calls' (each such batch cost a new instance and a call per point); for example: %s", e, n, guesttext.Escape(d.batchWhat[e])))
		}
	}
	return strings.Join(parts, "; ")
}

// addNonFinite tallies n points of export e returned with non-finite
// outputs, what describing one at (row, out): the one of least row, then
// output, is kept, whatever the order of the calls.
func (d *failTally) addNonFinite(e export, n, row, out int, what string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.nonFinite == nil {
		d.nonFinite, d.nfWhat, d.nfAt = map[export]int{}, map[export]string{}, map[export][2]int{}
	}
	d.nonFinite[e] += n
	at, seen := d.nfAt[e]
	if !seen || row < at[0] || row == at[0] && out < at[1] || row == at[0] && out == at[1] && what < d.nfWhat[e] {
		d.nfWhat[e], d.nfAt[e] = what, [2]int{row, out}
	}
}

// derivExport reports whether e is a model derivative export.
func derivExport(e export) bool {
	switch e {
	case exModelJacobian, exModelVJP, exModelForward, exModelPullback:
		return true
	}
	return false
}

// derivStatus is guestStatus for the single-point status returned by a
// derivative export e; a status 1 or 2 is tallied with the guest's
// kinfer_last_error message.
func (in *instance) derivStatus(e export, v int32) (abi.Status, error) {
	st, err := in.guestStatus(e, v, -1)
	if !derivExport(e) || err != nil {
		return st, err
	}
	msg := ""
	if st != abi.OK {
		msg = in.lastError()
	}
	in.p.deriv.add(e, st, msg)
	// The call also evaluated the point's values: evaluation_failures
	// counts it for the values' non-finite tally (tallyNonFinite).
	in.p.evals.addAll(e, []abi.Status{abi.OK}, "")
	return st, nil
}

func (d *failTally) add(e export, st abi.Status, msg string) {
	d.addAll(e, []abi.Status{st}, msg)
}

// addAll tallies the statuses of one call's points (one lock a call: an
// eval export's batch is on the evaluation's hot path).
func (d *failTally) addAll(e export, sts []abi.Status, msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.calls == nil {
		d.calls, d.fails, d.last = map[export]int{}, map[export]map[abi.Status]int{}, map[export]string{}
	}
	d.calls[e] += len(sts)
	for _, st := range sts {
		if st == abi.OK {
			continue
		}
		if d.fails[e] == nil {
			d.fails[e] = map[abi.Status]int{}
		}
		d.fails[e][st]++
	}
	// One message, the same whichever worker failed last: the first in
	// sort order (results and records do not depend on the workers).
	if msg != "" && (d.last[e] == "" || msg < d.last[e]) {
		d.last[e] = msg
	}
}

// note is one line per failing export, e.g. `kinfer_model_jacobian
// returned 1 (failed) at 100 of 100 (calls, or points of a batch); kinfer_last_error: "…"`,
// or "" when none failed.
func (d *failTally) note() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var parts []string
	for e := export(0); e < numExports; e++ {
		f := d.fails[e]
		if len(f) == 0 {
			continue
		}
		sts := make([]abi.Status, 0, len(f))
		for st := range f {
			sts = append(sts, st)
		}
		sort.Slice(sts, func(i, j int) bool { return sts[i] < sts[j] })
		var by []string
		for _, st := range sts {
			by = append(by, fmt.Sprintf("%d (%v) at %d", int(st), st, f[st]))
		}
		msg := d.last[e]
		if msg == "" {
			msg = "(no kinfer_last_error message)"
		} else {
			msg = `"` + guesttext.Escape(msg) + `"`
		}
		parts = append(parts, fmt.Sprintf("%s returned %s of %d; kinfer_last_error: %s", e, strings.Join(by, " and "), d.calls[e], msg))
	}
	for e := export(0); e < numExports; e++ {
		if n := d.nonFinite[e]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s returned status 0 with non-finite outputs in %d of %d evaluations (a point, or with rows_independent a block of its rows, each; for example %s)", e, n, d.calls[e], d.nfWhat[e]))
		}
	}
	return strings.Join(parts, "; ")
}

// DerivativeFailures describes the calls of the model's derivative exports
// that returned a failed or invalid status, with the guest's last message
// (see failTally), or "" when there were none.
func (w *model) DerivativeFailures() string { return w.pool.p.deriv.note() }

// EvaluationFailures describes the points of the plugin's eval exports
// (kinfer_model_eval, kinfer_likelihood_eval, …) that returned status 1
// (failed) or 2 (invalid), with the guest's last kinfer_last_error
// message, or "" when there were none.
func (w *model) EvaluationFailures() string { return w.pool.p.evals.note() }

// BatchFaults describes the batched calls that faulted while their points
// then succeeded alone (failTally.addBatchTrap), or "".
func (w *model) BatchFaults() string { return w.pool.p.evals.batchNote() }

// PluginName is the manifest's name, which messages use (ABI.md §4: the
// spec's may differ).
func (w *model) PluginName() string { return w.pool.p.Manifest.Name }
