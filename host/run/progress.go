package run

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kinfer/kinfer/abi"
	"github.com/kinfer/kinfer/host/target"
)

// Progresser is the optional capability of a method that can say where a
// run is, for the progress line of a long run: Progress returns a short
// phrase ("stage 4: q 0.01 → 0.05", "iteration 1200/10000, −log target
// 182.7") and the fraction of the run done, in [0, 1], or a negative
// number when it cannot be known (then no ETA is shown). It is called
// between Tell and the next Ask, at most a few times a second, and must
// not change the method's state. (It is not part of abi: a method has it
// by having the method, and the ABI and the plugins stay as they are.)
type Progresser interface {
	Progress() (status string, fraction float64)
}

// IsTerminal reports whether f is a character device (a terminal), the
// condition for showing progress.
func IsTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progress prints one updating line, at most every 200 ms, once a run has
// lasted a second.
type progress struct {
	w     io.Writer
	start time.Time
	last  time.Time
	shown bool
	// status, if set, adds to the line (a remote run's workers and their
	// throughput).
	status func() string
}

func (p *progress) extra() string {
	if p.status == nil {
		return ""
	}
	return " " + p.status() + " "
}

func newProgress(w io.Writer, start time.Time) *progress { return &progress{w: w, start: start} }

// update redraws the line: where the method is (Progresser), the
// evaluations, their rate, the elapsed time and, when the method knows
// the fraction done, the time left.
func (p *progress) update(c target.Counts, m abi.Method) {
	if p.w == nil {
		return
	}
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last, p.shown = now, true
	el := now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r\033[K%s%s", progressLine(c, m, el), p.extra())
}

// progressLine is the progress line after el seconds.
func progressLine(c target.Counts, m abi.Method, el float64) string {
	line := fmt.Sprintf("%d evaluations (%d failed)  %.0f/s  %s", c.Evaluations, c.Failed, float64(c.Evaluations)/el, clock(el))
	if pr, ok := m.(Progresser); ok {
		status, f := pr.Progress()
		if status != "" {
			line = status + "  |  " + line
		}
		if f > 0.01 && f < 1 {
			line += fmt.Sprintf("  %.0f%%, ETA %s", 100*f, clock(el*(1-f)/f))
		}
	}
	return line
}

// clock formats seconds as 12.3s, 4m05s or 1h02m.
func clock(s float64) string {
	switch {
	case s < 60:
		return fmt.Sprintf("%.1fs", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%dh%02dm", int(s)/3600, int(s)%3600/60)
}

func (p *progress) done(c target.Counts) {
	if p.w != nil && p.shown {
		el := time.Since(p.start).Seconds()
		fmt.Fprintf(p.w, "\r\033[K%d evaluations (%d failed)  %.0f/s  %s %sdone\n", c.Evaluations, c.Failed, float64(c.Evaluations)/el, clock(el), p.extra())
	}
}
