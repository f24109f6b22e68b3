package run

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/kinfer/kinfer/host/target"
)

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

func (p *progress) update(c target.Counts) {
	if p.w == nil {
		return
	}
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last, p.shown = now, true
	el := now.Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "\r%d evaluations (%d failed)  %.0f/s  %.1fs %s", c.Evaluations, c.Failed, float64(c.Evaluations)/el, el, p.extra())
}

func (p *progress) done(c target.Counts) {
	if p.w != nil && p.shown {
		el := time.Since(p.start).Seconds()
		fmt.Fprintf(p.w, "\r%d evaluations (%d failed)  %.0f/s  %.1fs %sdone\n", c.Evaluations, c.Failed, float64(c.Evaluations)/el, el, p.extra())
	}
}
