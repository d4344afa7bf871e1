package server

import (
	"encoding/json"
	"testing"
)

// streamsByDecoding is what bodyStreams replaced: encoding/json into a
// *bool field.
func streamsByDecoding(body []byte) bool {
	var b struct {
		Stream *bool `json:"stream"`
	}
	return json.Unmarshal(body, &b) == nil && b.Stream != nil && *b.Stream
}

var bodyStreamsCases = []struct {
	name, body string
	want       bool
}{
	{"true", `{"model":"m","stream":true}`, true},
	{"false", `{"stream":false,"model":"m"}`, false},
	{"absent", `{"model":"m","messages":[]}`, false},
	{"null", `{"stream":null}`, false},
	{"last wins", `{"stream":true,"stream":false}`, false},
	{"last wins true", `{"stream":false,"stream":true}`, true},
	{"null after true", `{"stream":true,"stream":null}`, false},
	{"case folded", `{"Stream":true}`, true},
	{"nested only", `{"options":{"stream":true},"messages":[{"stream":true}]}`, false},
	{"after a long value", `{"messages":[{"role":"user","content":"a \"stream\": true inside"}],"stream":true}`, true},
	{"string", `{"stream":"true"}`, false},
	{"number", `{"stream":1}`, false},
	{"type error elsewhere is fine", `{"stream":true,"x":{"y":[1,2,{"z":null}]}}`, true},
	{"escaped key", `{"\u0073tream":true}`, true},
	{"not an object", `[{"stream":true}]`, false},
	{"invalid", `{"stream":true`, false},
	{"trailing garbage", `{"stream":true} x`, false},
	{"whitespace", " \n{ \"stream\" : true }\n", true},
	{"empty", ``, false},
}

func TestBodyStreams(t *testing.T) {
	for _, c := range bodyStreamsCases {
		t.Run(c.name, func(t *testing.T) {
			if got := bodyStreams([]byte(c.body)); got != c.want {
				t.Errorf("bodyStreams(%s) = %v, want %v", c.body, got, c.want)
			}
			if ref := streamsByDecoding([]byte(c.body)); ref != c.want {
				t.Errorf("encoding/json reads %s as %v; the table says %v", c.body, ref, c.want)
			}
		})
	}
}

// FuzzBodyStreams checks bodyStreams against encoding/json.
func FuzzBodyStreams(f *testing.F) {
	for _, c := range bodyStreamsCases {
		f.Add([]byte(c.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if got, want := bodyStreams(body), streamsByDecoding(body); got != want {
			t.Errorf("bodyStreams(%q) = %v, encoding/json says %v", body, got, want)
		}
	})
}
