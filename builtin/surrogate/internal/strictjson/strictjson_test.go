package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

type inner struct {
	A int               `json:"a"`
	M map[string]inner2 `json:"m,omitempty"`
}

type inner2 struct {
	X float64
}

type Embedded struct {
	E string `json:"e"`
}

type doc struct {
	Embedded
	Name   string          `json:"name"`
	List   []inner         `json:"list" maxlen:"3"`
	Ptr    *inner          `json:"ptr,omitempty"`
	Nums   []float64       `json:"nums"`
	Any    any             `json:"any"`
	Raw    json.RawMessage `json:"raw"`
	Skip   int             `json:"-"`
	Plain  int
	hidden int
}

// reference decodes with encoding/json's Decoder and
// DisallowUnknownFields, the behaviour Unmarshal keeps (apart from maxlen),
// and refuses data after the document as json.Unmarshal does.
func reference(data []byte) (doc, error) {
	var d doc
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return d, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return d, errors.New("data after the document")
	}
	return d, nil
}

var corpus = []string{
	`{"name":"x","list":[{"a":1},{"a":2,"m":{"k":{"X":1}}}],"nums":[1,2,3]}`,
	`{"name":"x","bogus":1}`,
	`{"list":[{"a":1,"b":2}]}`,
	`{"ptr":{"a":1,"m":{"k":{"X":1,"Y":2}}}}`,
	`{"ptr":{"a":1,"m":{"k":{"x":1}}}}`, // case-insensitive, as encoding/json
	`{"NAME":"x","plain":3,"Plain":4}`,
	`{"e":"embedded","any":{"whatever":[1,{"deep":true}]},"raw":{"free":1}}`,
	`{"Skip":1}`,
	`{"hidden":1}`,
	`{"name":"a \"quoted\" {brace} [bracket] \\\\","list":[]}`,
	`{"n\u0061me":"escaped key"}`,
	`{"n\u0062me":"escaped unknown key"}`,
	`{"name":"x"`,
	`{"name":"x"} {}`,
	`[1,2]`,
	`null`,
	`{"list":{"a":1}}`,
	`{"nums":[1,"two"]}`,
	`  {  "name" : "spaces" , "nums" : [ 1 , 2 ]  }  `,
	`{"ptr":null,"list":null,"nums":[-1.5e3,0,1E+2]}`,
}

// Unmarshal accepts and refuses what encoding/json's strict Decoder does,
// and decodes the same values.
func TestMatchesDisallowUnknownFields(t *testing.T) {
	for _, s := range corpus {
		want, werr := reference([]byte(s))
		var got doc
		gerr := Unmarshal([]byte(s), &got)
		if (werr == nil) != (gerr == nil) {
			t.Errorf("%s: error %v, encoding/json's strict Decoder %v", s, gerr, werr)
			continue
		}
		if werr != nil && strings.Contains(werr.Error(), "unknown field") != strings.Contains(gerr.Error(), "unknown field") {
			t.Errorf("%s: error %v, encoding/json's strict Decoder %v", s, gerr, werr)
		}
		if werr == nil {
			a, _ := json.Marshal(want)
			b, _ := json.Marshal(got)
			if !bytes.Equal(a, b) {
				t.Errorf("%s: decoded %s, encoding/json %s", s, b, a)
			}
		}
	}
}

func TestUnknownFieldNamesItsPath(t *testing.T) {
	var d doc
	err := Unmarshal([]byte(`{"list":[{"a":1},{"a":1,"evil":2}]}`), &d)
	if err == nil || !strings.Contains(err.Error(), `unknown field "list[1].evil"`) {
		t.Fatalf("error %v", err)
	}
}

// A list longer than its maxlen tag, or than DefaultMaxLen, is refused
// before anything is decoded.
func TestListBounds(t *testing.T) {
	var d doc
	err := Unmarshal([]byte(`{"list":[{},{},{},{}]}`), &d)
	if err == nil || !strings.Contains(err.Error(), `more than 3 values in the list "list"`) {
		t.Fatalf("maxlen: error %v", err)
	}
	if d.List != nil {
		t.Fatalf("decoded %d elements before refusing", len(d.List))
	}
	if err := Unmarshal([]byte(`{"list":[{},{},{}]}`), &d); err != nil || len(d.List) != 3 {
		t.Fatalf("3 elements: %v, %d", err, len(d.List))
	}
	big := "{\"nums\":[" + strings.Repeat("0,", DefaultMaxLen) + "0]}"
	if err := Unmarshal([]byte(big), &d); err == nil || !strings.Contains(err.Error(), "more than 1048576 values") {
		t.Fatalf("default bound: error %v", err)
	}
}

// The walk allocates nothing in proportion to the document: a list bomb
// of ~2 MB costs a few kilobytes before it is refused (encoding/json would
// build its 700 000 structs first).
func TestRefusalAllocatesLittle(t *testing.T) {
	type bomb struct {
		L []inner `json:"l" maxlen:"10"`
	}
	data := []byte(`{"l":[` + strings.Repeat("{},", 700000) + `{}]}`)
	allocs := testing.AllocsPerRun(3, func() {
		var b bomb
		if err := Unmarshal(data, &b); err == nil {
			t.Fatal("accepted")
		}
	})
	if allocs > 50 {
		t.Errorf("%v allocations to refuse a list bomb", allocs)
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range corpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, werr := reference(data)
		var got doc
		gerr := Unmarshal(data, &got)
		if werr == nil && gerr != nil && !strings.Contains(gerr.Error(), "values in the list") {
			t.Fatalf("%q: refused (%v), encoding/json accepts", data, gerr)
		}
		if werr != nil && gerr == nil {
			t.Fatalf("%q: accepted, encoding/json refuses (%v)", data, werr)
		}
	})
}
