package protocol

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the NAME.out sections of testdata/*.txtar")

// codec decodes and encodes one kind of value for the golden tests.
type codec struct {
	decode func([]byte) (any, error)
	encode func(any) ([]byte, error)
	// canon maps a decoded value to what a decode of its encoding must equal.
	canon func(any) any
}

var itemCodec = codec{
	decode: func(b []byte) (any, error) { return UnmarshalItem(b) },
	encode: func(v any) ([]byte, error) { return MarshalItem(v.(ResponseItem)) },
	canon:  func(v any) any { return canonicalItem(v.(ResponseItem)) },
}

var eventCodec = codec{
	decode: func(b []byte) (any, error) {
		var e ResponseEvent
		err := json.Unmarshal(b, &e)
		return e, err
	},
	encode: func(v any) ([]byte, error) { return v.(ResponseEvent).AppendJSON(nil) },
	canon: func(v any) any {
		e := v.(ResponseEvent)
		if e.Item != nil {
			e.Item = canonicalItem(e.Item)
		}
		return e
	},
}

func jsonCodec[T any]() codec {
	return codec{
		decode: func(b []byte) (any, error) {
			var v T
			err := json.Unmarshal(b, &v)
			return v, err
		},
		encode: func(v any) ([]byte, error) { return json.Marshal(v) },
		canon:  func(v any) any { return v },
	}
}

// canonicalItem applies the reference implementation's lossy rules to a decoded item, so that
// it equals the decode of its own encoding.
func canonicalItem(it ResponseItem) ResponseItem {
	if r, ok := it.(*Reasoning); ok && r.Content != nil && !hasReasoningText(r.Content) {
		c := *r
		c.Content = nil
		return &c
	}
	return it
}

// ignoreRaw ignores ToolSpec.Raw, which keeps the original key order and so differs between
// the first and the second decode.
var ignoreRaw = cmp.FilterPath(func(p cmp.Path) bool {
	sf, ok := p.Last().(cmp.StructField)
	return ok && sf.Name() == "Raw" && p.Index(-2).Type() == reflect.TypeFor[ToolSpec]()
}, cmp.Ignore())

func TestGoldenItems(t *testing.T)    { runGolden(t, "items.txtar", itemCodec) }
func TestGoldenEvents(t *testing.T)   { runGolden(t, "events.txtar", eventCodec) }
func TestGoldenTools(t *testing.T)    { runGolden(t, "tools.txtar", jsonCodec[ToolSpec]()) }
func TestGoldenRequests(t *testing.T) { runGolden(t, "requests.txtar", jsonCodec[ResponsesRequest]()) }

func runGolden(t *testing.T, file string, c codec) {
	path := filepath.Join("testdata", file)
	ar, err := txtar.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string][]byte{}
	var names []string
	for _, f := range ar.Files {
		sections[f.Name] = f.Data
		if strings.HasSuffix(f.Name, ".json") && !strings.HasSuffix(f.Name, ".want.json") {
			names = append(names, strings.TrimSuffix(f.Name, ".json"))
		}
	}
	if len(names) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	outs := map[string][]byte{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			in := sections[name+".json"]
			v1, err := c.decode(in)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, err := c.encode(v1)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			outs[name] = out

			want := in
			if w, ok := sections[name+".want.json"]; ok {
				want = w
			}
			if diff := cmp.Diff(decodeAny(t, want), decodeAny(t, out)); diff != "" {
				t.Errorf("encoding differs from %s (-want +got):\n%s\ngot: %s", name, diff, out)
			}
			if file == "events.txtar" && !bytes.HasPrefix(out, []byte(`{"type":`)) {
				t.Errorf("event encoding does not start with type: %s", out)
			}
			if !*update {
				golden, ok := sections[name+".out"]
				if !ok {
					t.Errorf("missing %s.out section (run go test -update)", name)
				} else if got := string(out) + "\n"; got != string(golden) {
					t.Errorf("exact encoding changed:\n got: %s want: %s", got, golden)
				}
			}

			v2, err := c.decode(out)
			if err != nil {
				t.Fatalf("re-decode: %v", err)
			}
			if diff := cmp.Diff(c.canon(v1), v2, ignoreRaw); diff != "" {
				t.Errorf("re-decode differs (-first +second):\n%s", diff)
			}
			// Encoding is a fixed point once the lossy rules have been applied.
			outCanon, err := c.encode(c.canon(v1))
			if err != nil {
				t.Fatalf("encode canonical: %v", err)
			}
			out2, err := c.encode(v2)
			if err != nil {
				t.Fatalf("re-encode: %v", err)
			}
			if !bytes.Equal(outCanon, out2) {
				t.Errorf("encoding is not stable:\n1: %s\n2: %s", outCanon, out2)
			}
		})
	}
	if *update {
		var files []txtar.File
		for _, f := range ar.Files {
			if strings.HasSuffix(f.Name, ".out") {
				continue
			}
			files = append(files, f)
			name, ok := strings.CutSuffix(f.Name, ".want.json")
			if !ok {
				name = strings.TrimSuffix(f.Name, ".json")
				if _, hasWant := sections[name+".want.json"]; hasWant {
					continue // the .out section goes after the .want.json one
				}
			}
			if out, ok := outs[name]; ok {
				files = append(files, txtar.File{Name: name + ".out", Data: append(out, '\n')})
			}
		}
		ar.Files = files
		if err := os.WriteFile(path, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Every section must belong to a case.
	for name := range sections {
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, ".out"), ".json"), ".want")
		if _, ok := sections[base+".json"]; !ok {
			t.Errorf("%s: orphan section %s", path, name)
		}
	}
}

// decodeAny decodes JSON into an `any` tree, keeping numbers exact.
func decodeAny(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	if d.More() {
		t.Fatalf("trailing data after JSON value: %s", b)
	}
	return v
}

// TestGoldenCoverage makes sure every item variant and every event type has a golden case.
func TestGoldenCoverage(t *testing.T) {
	seen := map[string]bool{}
	for _, file := range []string{"items.txtar", "events.txtar"} {
		ar, err := txtar.ParseFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range ar.Files {
			if !strings.HasSuffix(f.Name, ".json") || strings.HasSuffix(f.Name, ".want.json") {
				continue
			}
			if file == "items.txtar" {
				it, err := UnmarshalItem(f.Data)
				if err != nil {
					t.Fatalf("%s: %v", f.Name, err)
				}
				seen[fmt.Sprintf("%T", it)] = true
			} else {
				var e ResponseEvent
				if err := json.Unmarshal(f.Data, &e); err != nil {
					t.Fatalf("%s: %v", f.Name, err)
				}
				seen[string(e.Type)] = true
			}
		}
	}
	want := []string{
		"*protocol.Message", "*protocol.Reasoning", "*protocol.LocalShellCall",
		"*protocol.FunctionCall", "*protocol.FunctionCallOutput", "*protocol.CustomToolCall",
		"*protocol.CustomToolCallOutput", "*protocol.ToolSearchCall", "*protocol.ToolSearchOutput",
		"*protocol.WebSearchCall", "*protocol.OtherItem",
	}
	for _, ev := range []EventType{
		EventCreated, EventServerModel, EventOutputItemAdded, EventOutputItemDone,
		EventOutputTextDelta, EventReasoningContentDelta, EventReasoningSummaryDelta,
		EventReasoningSummaryPartAdded, EventToolCallInputDelta, EventCompleted, EventFailed,
	} {
		want = append(want, string(ev))
	}
	var missing []string
	for _, w := range want {
		if !seen[w] {
			missing = append(missing, w)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("no golden case for: %v", missing)
	}
}
