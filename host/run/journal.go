package run

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/kinfer/kinfer/abi"
)

// JournalFile is the name of the sample journal in a run's output
// directory: the samples a streaming method (abi.SampleStream) has produced,
// appended as they come, so that a checkpoint records only how many there
// are. It is removed when the run completes.
const JournalFile = "samples.journal"

// journalMagic starts the journal; a little-endian uint64 record width
// (values per sample: d, log prior, log likelihood) follows it, then the
// records, each width little-endian float64s. Samples are in the method's
// coordinates (x when the study has transforms), so that a resumed method
// gets back exactly the bits it produced.
var journalMagic = []byte("KINFERJ1")

const journalHeader = 16

type journal struct {
	f     *os.File
	w     *bufio.Writer
	width int
	n     int // records written (flushed or buffered)
	buf   []byte
	// keep is the size a reopened journal is cut to (trim) once the
	// resume is accepted, 0 for a new one.
	keep int64
}

// createJournal starts an empty journal in dir for samples of d values.
func createJournal(dir string, d int) (*journal, error) {
	f, err := os.OpenFile(filepath.Join(dir, JournalFile), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	j := &journal{f: f, w: bufio.NewWriterSize(f, 1<<16), width: d + 2}
	hdr := make([]byte, journalHeader)
	copy(hdr, journalMagic)
	binary.LittleEndian.PutUint64(hdr[8:], uint64(j.width))
	if _, err := j.w.Write(hdr); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// openJournal reopens dir's journal for samples of d values at the
// checkpoint that recorded n samples: it reads those n, cuts off anything
// written after that checkpoint, and appends from there.
//
// The n samples must fit in the memory budget (journalBytes): a journal
// and a checkpoint from elsewhere may claim any number. The journal must
// be a regular file in dir, not a symbolic link (it is truncated: the
// link's target would be) nor a named pipe (the read would block).
func openJournal(dir string, d, n int, budget int64) (*journal, []abi.Sample, error) {
	p := filepath.Join(dir, JournalFile)
	if n < 0 {
		return nil, nil, fmt.Errorf("checkpoint: sample journal %s: %d samples", p, n)
	}
	f, err := openRegular(p, os.O_RDWR)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint: sample journal: %w", err)
	}
	fail := func(format string, args ...any) (*journal, []abi.Sample, error) {
		f.Close()
		return nil, nil, fmt.Errorf("checkpoint: sample journal %s: "+format, append([]any{p}, args...)...)
	}
	width := d + 2
	hdr := make([]byte, journalHeader)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return fail("%v", err)
	}
	if !bytes.Equal(hdr[:8], journalMagic) || binary.LittleEndian.Uint64(hdr[8:]) != uint64(width) {
		return fail("not a journal of %d values per sample", width)
	}
	// The file must hold the samples the checkpoint counts before the
	// count is charged to the budget (audit 7: a count of 10^15 in a
	// 10 000-byte journal was refused as "more than the memory budget").
	if int64(n) > (math.MaxInt64-journalHeader)/(int64(width)*8) {
		return fail("%d samples of %d values: more than any file holds", n, width)
	}
	size := int64(journalHeader) + int64(n)*int64(width)*8
	if st, err := f.Stat(); err != nil {
		return fail("%v", err)
	} else if st.Size() < size {
		return fail("holds %d bytes, the checkpoint needs %d (%d samples)", st.Size(), size, n)
	}
	if need := journalBytes(n, d); need > budget {
		return fail("its %d samples need about %s in memory, more than the memory budget of %s (a larger --memory-budget reads more)%w", n, FormatBytes(need), FormatBytes(budget), errOverBudget)
	}
	samples := make([]abi.Sample, 0, min(n, 1<<20))
	r := bufio.NewReaderSize(f, 1<<16)
	rec := make([]byte, 8*width)
	for range n {
		if _, err := io.ReadFull(r, rec); err != nil {
			return fail("%v", err)
		}
		theta := make([]float64, d)
		for i := range theta {
			theta[i] = math.Float64frombits(binary.LittleEndian.Uint64(rec[8*i:]))
		}
		samples = append(samples, abi.Sample{Theta: theta,
			LogPrior: math.Float64frombits(binary.LittleEndian.Uint64(rec[8*d:])),
			LogLik:   math.Float64frombits(binary.LittleEndian.Uint64(rec[8*d+8:]))})
	}
	// Not cut yet: a resume refused after this (the method's state does
	// not take these samples) leaves the journal whole (audit 15: a
	// checkpoint edited to count 1000 samples cut a journal of a million
	// to 1000, then the resume was refused).
	return &journal{f: f, w: bufio.NewWriterSize(f, 1<<16), width: width, n: n, keep: size}, samples, nil
}

// trim cuts a reopened journal to the samples its checkpoint counts
// (records past them were written after that checkpoint) and places the
// writer after them: the resume has been accepted.
func (j *journal) trim() error {
	if err := j.f.Truncate(j.keep); err != nil {
		return fmt.Errorf("sample journal: %w", err)
	}
	if _, err := j.f.Seek(j.keep, io.SeekStart); err != nil {
		return fmt.Errorf("sample journal: %w", err)
	}
	return nil
}

// journalBytes is the memory n restored samples of d values take: each
// abi.Sample (64 bytes) and its values, with room for the slice's growth
// and the method's own copy of the samples (metropolis keeps them by
// chain).
func journalBytes(n, d int) int64 {
	per := int64(3*64 + 8*d + 16)
	if n > 0 && int64(n) > math.MaxInt64/per {
		return math.MaxInt64
	}
	return int64(n) * per
}

// append adds samples; each must have width−2 values.
func (j *journal) append(samples []abi.Sample) error {
	if cap(j.buf) < 8*j.width {
		j.buf = make([]byte, 8*j.width)
	}
	b := j.buf[:8*j.width]
	d := j.width - 2
	for _, s := range samples {
		for i, v := range s.Theta {
			binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
		}
		binary.LittleEndian.PutUint64(b[8*d:], math.Float64bits(s.LogPrior))
		binary.LittleEndian.PutUint64(b[8*d+8:], math.Float64bits(s.LogLik))
		if _, err := j.w.Write(b); err != nil {
			return fmt.Errorf("sample journal: %w", err)
		}
		j.n++
	}
	return nil
}

// flush writes the buffered records to the file (before a checkpoint
// records their count).
func (j *journal) flush() error {
	if err := j.w.Flush(); err != nil {
		return fmt.Errorf("sample journal: %w", err)
	}
	return nil
}

func (j *journal) close() error {
	if j == nil || j.f == nil {
		return nil
	}
	err := j.flush()
	if cerr := j.f.Close(); err == nil {
		err = cerr
	}
	j.f = nil
	return err
}
