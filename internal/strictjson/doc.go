// Package strictjson decodes files kinfer did not necessarily write — the
// surrogate files (builtin/surrogate/nn, builtin/surrogate/kriging), the
// records of a run directory (host/run: checkpoint.json, run.json,
// summary.json, analysis.json) and the methods' saved states — from a
// document already in memory, in memory bounded by the document's size.
//
// encoding/json alone does not bound it: its Decoder copies the whole
// document into a buffer it grows by doubling (with the caller's copy, up
// to about 4× the file was measured at peak), and a list decodes into as
// many elements as the text holds, so "[{},{},…]" of 3 bytes per element
// becomes ≈ 60–170 bytes per element of a struct. Unmarshal first walks
// the document without allocating: it refuses a key the target has no
// field for (as the Decoder's DisallowUnknownFields does) and a list longer
// than its field's `maxlen` tag (or than DefaultMaxLen), and only then
// decodes with json.Unmarshal, which reads the caller's bytes in place.
//
// Decode adds options: AllowUnknown skips unknown keys (the run records
// keep json.Unmarshal's tolerance of keys a later kinfer may add), and
// PerByte bounds the estimated memory of the decoded values per byte of
// text, for the lists that are legitimately long (the samples in a
// method's state), which no maxlen can bound: a list of numbers costs 4
// bytes per byte of text, a list of empty structs or lists 8 to 20 or
// more.
package strictjson
