package protocol

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// Decoding reads its input in place and keeps only copies: a value decoded
// from a buffer that is overwritten afterwards equals one decoded from a
// buffer left alone, for every golden case of every kind.
func TestDecodedValuesKeepNoInput(t *testing.T) {
	for file, c := range map[string]codec{
		"items.txtar":    itemCodec,
		"events.txtar":   eventCodec,
		"tools.txtar":    jsonCodec[ToolSpec](),
		"requests.txtar": jsonCodec[ResponsesRequest](),
	} {
		ar, err := txtar.ParseFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		cases := 0
		for _, f := range ar.Files {
			if !strings.HasSuffix(f.Name, ".json") || strings.HasSuffix(f.Name, ".want.json") {
				continue
			}
			want, err := c.decode(bytes.Clone(f.Data))
			if err != nil {
				continue // the golden tests check the errors
			}
			buf := bytes.Clone(f.Data)
			got, err := c.decode(buf)
			if err != nil {
				t.Fatalf("%s %s: %v", file, f.Name, err)
			}
			for i := range buf {
				buf[i] = '#'
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s: the decoded value changed with its input (-kept +overwritten)\n%s", file, f.Name, diff)
			}
			cases++
		}
		if cases == 0 {
			t.Errorf("%s: no case decoded", file)
		}
	}
}
