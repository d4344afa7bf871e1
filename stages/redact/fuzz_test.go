package redact

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzRedact plants a secret of a chosen kind between two arbitrary texts
// and streams the result split at random: no panic, the streamed output
// equals the whole-text output, nothing is held back beyond MaxHold, and no
// distinctive piece of the planted secret comes out.
func FuzzRedact(f *testing.F) {
	f.Add("hello", "world", uint8(0), uint64(1))
	f.Add("Bearer", "x", uint8(3), uint64(2))
	f.Add("-----BEGIN PRIVATE KEY-----\n", "-----END PRIVATE KEY-----", uint8(4), uint64(3))
	f.Add("sk-", "AKIA", uint8(1), uint64(4))
	f.Add("é\xc3", "\xa9ghp_", uint8(2), uint64(5))
	f.Add("TCK-1", "password=", uint8(5), uint64(6))
	r, err := New(Config{Patterns: []Pattern{
		{Kind: "ticket", Regexp: `\bTCK-[0-9]{6}\b`},
		{Kind: "pw", Regexp: `(?i)password=\S{4,}`},
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, prefix, suffix string, kind uint8, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 77))
		var secret strings.Builder
		var secrets []string
		for _, s := range plantSecret(rng, propertyKinds[int(kind)%len(propertyKinds)]) {
			secret.WriteString(s.text)
			if s.secret {
				secrets = append(secrets, s.text)
			}
		}
		text := prefix + " " + secret.String() + " " + suffix
		whole := r.String(text)
		st := r.Stream()
		var out strings.Builder
		for _, p := range splitAt(rng, text) {
			out.WriteString(st.Push(p))
			if len(st.Pending()) > r.MaxHold() {
				t.Fatalf("holds %d bytes > %d", len(st.Pending()), r.MaxHold())
			}
		}
		out.WriteString(st.Flush())
		if out.String() != whole {
			t.Fatalf("streamed output differs from whole-text output\nstream %q\nwhole  %q", out.String(), whole)
		}
		for _, s := range secrets {
			for _, p := range secretPieces(s) {
				if strings.Contains(whole, p) && !strings.Contains(prefix+suffix, p) {
					t.Fatalf("piece %q of secret %q leaked: %q", p, s, whole)
				}
			}
		}
	})
}

// FuzzJSON: redacting a JSON document never panics, keeps valid JSON valid,
// and leaves documents without secrets untouched.
func FuzzJSON(f *testing.F) {
	f.Add(`{"a":"` + tSK + `","b":[1,"x"],"encrypted_content":"` + tSK + `"}`)
	f.Add(`["\u0073k-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "\"", "\\"]`)
	f.Add(`{"k": "-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----"}`)
	f.Add(`not json sk-`)
	r := Default()
	f.Fuzz(func(t *testing.T, doc string) {
		out := r.JSON(doc)
		if json.Valid([]byte(doc)) && !json.Valid([]byte(out)) {
			t.Fatalf("valid JSON became invalid:\n in %q\nout %q", doc, out)
		}
		if !strings.Contains(out, "[REDACTED:") && out != doc && !strings.Contains(doc, "[REDACTED:") {
			t.Fatalf("changed without a marker:\n in %q\nout %q", doc, out)
		}
	})
}
