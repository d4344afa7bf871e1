package redact

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/protocol"
)

// A planted text: segments that are either ordinary text or a secret.
type segment struct {
	text   string
	secret bool
	kind   string // for secrets
}

const (
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperNum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b64      = alnum + "+/"
)

func randFrom(rng *rand.Rand, set string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = set[rng.IntN(len(set))]
	}
	return string(b)
}

// mixed returns n bytes from set with at least one letter and one digit
// among the first min bytes.
func mixed(rng *rand.Rand, set string, n int) string {
	b := []byte(randFrom(rng, set, n))
	b[rng.IntN(10)] = "0123456789"[rng.IntN(10)]
	b[10+rng.IntN(5)] = "abcdefghijklmnopqrstuvwxyz"[rng.IntN(26)]
	return string(b)
}

// plantSecret returns the segments of one secret of kind (a Bearer secret
// keeps "Bearer " as ordinary text).
func plantSecret(rng *rand.Rand, kind string) []segment {
	sec := func(s string) []segment { return []segment{{text: s, secret: true, kind: kind}} }
	switch kind {
	case KindAPIKey:
		prefix := []string{"sk-", "sk-proj-", "sk-ant-api03-", "sk-svcacct-"}[rng.IntN(4)]
		return sec(prefix + mixed(rng, alnum+"_-", 20+rng.IntN(80)))
	case KindAWSAccessKey:
		prefix := []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T" + randFrom(rng, upperNum, 1)}[rng.IntN(5)]
		return sec(prefix + randFrom(rng, upperNum, 16))
	case KindGitHubToken:
		if rng.IntN(2) == 0 {
			return sec("gh" + randFrom(rng, "pousr", 1) + "_" + randFrom(rng, alnum, 36))
		}
		return sec("github_pat_" + randFrom(rng, alnum, 22) + "_" + randFrom(rng, alnum, 59))
	case KindBearerToken:
		word := []string{"Bearer ", "bearer ", "Bearer  ", "BEARER\t"}[rng.IntN(4)]
		tok := mixed(rng, alnum+"._~+/-", 16+rng.IntN(200)) + strings.Repeat("=", rng.IntN(3))
		return []segment{{text: word}, {text: tok, secret: true, kind: kind}}
	case KindPrivateKey:
		label := []string{"", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", "DSA "}[rng.IntN(6)]
		var b strings.Builder
		b.WriteString("-----BEGIN " + label + "PRIVATE KEY-----\n")
		for range 1 + rng.IntN(12) {
			b.WriteString(randFrom(rng, b64, 64) + "\n")
		}
		b.WriteString(randFrom(rng, b64, 1+rng.IntN(60)) + "==\n")
		b.WriteString("-----END " + label + "PRIVATE KEY-----")
		return sec(b.String())
	case "ticket": // the user pattern of the property test
		return sec("TCK-" + randFrom(rng, "0123456789", 6))
	}
	panic("unknown kind " + kind)
}

var propertyKinds = append(append([]string{}, Builtins...), "ticket")

// Ordinary words, including near misses of every detector.
var fillerWords = []string{
	"the", "model", "said", "ok", "fix", "it", "s", "k", "-", "A", "b", "g", "B",
	"sk-learn", "task-force", "risk-free", "sk-", "sk-abc123", "sk-no-digits-in-this-hyphenated-phrase",
	"AKIA", "AKIA1234", "AKIAABCDEFGHIJKLMNOPQ", "ASIAN", "akiaiosfodnn7example",
	"ghp_", "ghp_short1", "github", "github_pat", "gh", "ghost_writer",
	"bearer, of", "Bearer:", "the bearer of news", "Bearer <token>", "Bearer abc",
	"-----", "----------", "-----BEGIN CERTIFICATE-----", "-----BEGIN PUBLIC KEY-----", "BEGIN", "PRIVATE KEY",
	"TCK-", "TCK-12", "TCK-12345",
	"é", "世界", "naïve", "🙂", "[REDACTED:api_key]",
}

var separators = []string{" ", " ", " ", "\n", ", ", ". ", "\t", "\n\n"}

func plantText(rng *rand.Rand) []segment {
	var segs []segment
	for n := rng.IntN(40); n >= 0; n-- {
		if len(segs) > 0 {
			sep := separators[rng.IntN(len(separators))]
			if last := segs[len(segs)-1]; last.kind == KindBearerToken && sep[0] == '.' {
				sep = " " // '.' belongs to a bearer token (JWTs): "tok." is one token
			}
			segs = append(segs, segment{text: sep})
		}
		switch rng.IntN(6) {
		case 0:
			segs = append(segs, plantSecret(rng, propertyKinds[rng.IntN(len(propertyKinds))])...)
		case 1:
			segs = append(segs, segment{text: randFrom(rng, "abcdefghijklmnopqrstuvwxyz0123456789", 1+rng.IntN(8))})
		default:
			segs = append(segs, segment{text: fillerWords[rng.IntN(len(fillerWords))]})
		}
	}
	return segs
}

// expectation is what a planted text must redact to, and where each byte of
// ordinary input text lands in the output.
type expectation struct {
	input, output string
	secrets       []string
	where         []int // input byte → output byte (-1 inside a secret)
}

func expect(segs []segment) expectation {
	var e expectation
	var in, out strings.Builder
	for _, s := range segs {
		if s.secret {
			e.secrets = append(e.secrets, s.text)
			for range len(s.text) {
				e.where = append(e.where, -1)
			}
			in.WriteString(s.text)
			out.WriteString(Marker(s.kind))
			continue
		}
		for i := range len(s.text) {
			e.where = append(e.where, out.Len()+i)
		}
		in.WriteString(s.text)
		out.WriteString(s.text)
	}
	e.input, e.output = in.String(), out.String()
	return e
}

// splitAt cuts s at random byte offsets (inside runes too).
func splitAt(rng *rand.Rand, s string) []string {
	var parts []string
	maxLen := []int{1, 3, 16, 64, 1 << 20}[rng.IntN(5)]
	for len(s) > 0 {
		n := 1 + rng.IntN(min(len(s), maxLen))
		if rng.IntN(10) == 0 {
			parts = append(parts, "")
		}
		parts = append(parts, s[:n])
		s = s[n:]
	}
	return parts
}

// possibleStart reports whether held-back text begins like a secret: it is
// compatible with the fixed start of one of the detectors.
func possibleStart(s string) bool {
	for _, lit := range []string{"sk-", "AKIA", "ASIA", "ABIA", "ACCA", "A3T", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "-----BEGIN ", "TCK-"} {
		if strings.HasPrefix(s, lit) || strings.HasPrefix(lit, s) {
			return true
		}
	}
	n := min(len(s), 6)
	return strings.EqualFold(s[:n], "bearer"[:n])
}

// secretPieces are the distinctive 12-byte windows of a secret: none may
// appear in any output.
func secretPieces(secret string) []string {
	var out []string
	for i := 0; i+12 <= len(secret); i += 6 {
		w := secret[i : i+12]
		if strings.Contains(w, "PRIVATE KEY") || strings.Contains(w, "-----") || strings.HasPrefix(secret, "TCK-") {
			continue
		}
		out = append(out, w)
	}
	return out
}

// For random texts with planted secrets of every kind, split at random delta
// boundaries: no secret appears in any output delta, all other text comes
// out exactly and in order, nothing is held back longer than the patterns
// need, and the result does not depend on the split.
func TestRedactionProperty(t *testing.T) {
	r, err := New(Config{Patterns: []Pattern{{Kind: "ticket", Regexp: `\bTCK-[0-9]{6}\b`}}})
	if err != nil {
		t.Fatal(err)
	}
	rounds := 3000
	if testing.Short() {
		rounds = 300
	}
	seen := map[string]int{}
	for round := range rounds {
		rng := rand.New(rand.NewPCG(uint64(round), 42))
		segs := plantText(rng)
		for _, s := range segs {
			if s.secret {
				seen[s.kind]++
			}
		}
		e := expect(segs)
		parts := splitAt(rng, e.input)
		if err := checkStream(r, e, parts); err != nil {
			t.Fatalf("round %d: %v\ninput:  %q\nparts:  %q", round, err, e.input, parts)
		}
	}
	for _, k := range propertyKinds {
		if seen[k] < rounds/20 {
			t.Errorf("kind %s planted only %d times", k, seen[k])
		}
	}
}

func checkStream(r *Redactor, e expectation, parts []string) error {
	st := r.Stream()
	var out strings.Builder
	consumed := 0
	var pieces []string
	for _, s := range e.secrets {
		pieces = append(pieces, secretPieces(s)...)
	}
	check := func(delta string) error {
		for _, s := range e.secrets {
			if len(delta) >= len(s) && strings.Contains(delta, s) {
				return fmt.Errorf("secret %q in output delta %q", s, delta)
			}
		}
		if len(delta) >= 12 {
			for _, p := range pieces {
				if strings.Contains(delta, p) {
					return fmt.Errorf("part %q of a secret in output delta %q", p, delta)
				}
			}
		}
		// In order and exact: the output so far is a prefix of the expected.
		if n := out.Len(); n+len(delta) > len(e.output) || e.output[n:n+len(delta)] != delta {
			return fmt.Errorf("output %q + %q is not a prefix of the expected %q", out.String(), delta, e.output)
		}
		out.WriteString(delta)
		return nil
	}
	for _, p := range parts {
		if err := check(st.Push(p)); err != nil {
			return err
		}
		consumed += len(p)
		held := st.Pending()
		// Hold-back bound: no more than the longest pattern needs, and only
		// text that can still begin a secret.
		if len(held) > r.MaxHold() {
			return fmt.Errorf("holds %d bytes > MaxHold %d: %q", len(held), r.MaxHold(), held)
		}
		if held != "" && !possibleStart(held) {
			return fmt.Errorf("holds %q, which cannot begin a secret", held)
		}
		if !strings.HasSuffix(e.input[:consumed], held) {
			return fmt.Errorf("held %q is not the tail of the input", held)
		}
		// Every ordinary byte before the held tail is already out.
		for i := consumed - len(held) - 1; i >= 0; i-- {
			if e.where[i] >= 0 {
				if out.Len() <= e.where[i] {
					return fmt.Errorf("ordinary byte %d (%q) not released after %d input bytes (released %q, held %q)",
						i, e.input[i], consumed, out.String(), held)
				}
				break
			}
		}
	}
	if err := check(st.Flush()); err != nil {
		return err
	}
	if out.String() != e.output {
		return fmt.Errorf("output\n got %q\nwant %q", out.String(), e.output)
	}
	if whole := r.String(e.input); whole != e.output {
		return fmt.Errorf("String(whole)\n got %q\nwant %q", whole, e.output)
	}
	return nil
}

// The property test must be able to fail: a redactor without some detector,
// or one that releases too early, is caught.
func TestRedactionPropertyCatchesLeaks(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	segs := []segment{{text: "key "}}
	segs = append(segs, plantSecret(rng, KindAPIKey)...)
	segs = append(segs, segment{text: " done"})
	e := expect(segs)
	weak, err := New(Config{Builtins: []string{KindAWSAccessKey}, Patterns: []Pattern{{Kind: "ticket", Regexp: `TCK-[0-9]{6}`}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := checkStream(weak, e, splitAt(rng, e.input)); err == nil {
		t.Errorf("missing detector not caught: %v", err)
	}
	// Splitting the key into two pushes through separate streams (a stream
	// that forgets its state) leaks a piece.
	r := Default()
	half := len(e.input) / 2
	leak := r.Stream().Flush() + r.String(e.input[:half]) + r.String(e.input[half:])
	if leak == e.output {
		t.Errorf("stateless redaction unexpectedly caught the split secret")
	}
}

// The stage keeps each item's redacted deltas consistent with its redacted
// done item, whatever the interleaving of text and reasoning deltas, and
// emits no delta after its item's done event.
func TestResponseStageProperty(t *testing.T) {
	r := Default()
	for round := range 300 {
		rng := rand.New(rand.NewPCG(uint64(round), 5))
		text, reasoning := expect(plantTextBuiltin(rng)), expect(plantTextBuiltin(rng))
		tParts, rParts := splitAt(rng, text.input), splitAt(rng, reasoning.input)
		in := []protocol.ResponseEvent{protocol.Created(), protocol.Added(&protocol.Reasoning{})}
		textOpen := false
		for len(tParts)+len(rParts) > 0 {
			if len(rParts) > 0 && (len(tParts) == 0 || rng.IntN(2) == 0) {
				in = append(in, protocol.ReasoningDelta(rParts[0], 0))
				rParts = rParts[1:]
				if len(rParts) == 0 {
					in = append(in, protocol.Done(&protocol.Reasoning{Content: []protocol.ReasoningContent{{Type: protocol.ReasoningTypeText, Text: reasoning.input}}}))
				}
				continue
			}
			if !textOpen {
				in = append(in, protocol.Added(protocol.AssistantMessage("")))
				textOpen = true
			}
			in = append(in, protocol.TextDelta(tParts[0]))
			tParts = tParts[1:]
		}
		in = append(in, protocol.Done(protocol.AssistantMessage(text.input)), protocol.Completed("r", nil))

		st := NewResponseStage(r)
		var out []protocol.ResponseEvent
		emit := func(ev protocol.ResponseEvent) { out = append(out, ev) }
		for _, ev := range in {
			if err := st.Push(context.Background(), ev, emit); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Finish(context.Background(), emit); err != nil {
			t.Fatal(err)
		}
		var gotText, gotReasoning strings.Builder
		var doneText, doneReasoning string
		textDone, reasoningDone := false, false
		for _, ev := range out {
			switch ev.Type {
			case protocol.EventOutputTextDelta:
				if textDone {
					t.Fatalf("round %d: text delta after its done", round)
				}
				gotText.WriteString(ev.Delta)
			case protocol.EventReasoningContentDelta:
				if reasoningDone {
					t.Fatalf("round %d: reasoning delta after its done", round)
				}
				gotReasoning.WriteString(ev.Delta)
			case protocol.EventOutputItemDone:
				switch it := ev.Item.(type) {
				case *protocol.Message:
					textDone, doneText = true, it.Content[0].Text
				case *protocol.Reasoning:
					reasoningDone, doneReasoning = true, it.Content[0].Text
				}
			}
		}
		if gotText.String() != text.output || doneText != text.output {
			t.Fatalf("round %d: text\ndeltas %q\ndone   %q\nwant   %q", round, gotText.String(), doneText, text.output)
		}
		if gotReasoning.String() != reasoning.output || doneReasoning != reasoning.output {
			t.Fatalf("round %d: reasoning\ndeltas %q\ndone   %q\nwant   %q", round, gotReasoning.String(), doneReasoning, reasoning.output)
		}
		if last := out[len(out)-1]; last.Type != protocol.EventCompleted {
			t.Fatalf("round %d: last event %s", round, last.Type)
		}
	}
}

// plantTextBuiltin is plantText without the user pattern's kind.
func plantTextBuiltin(rng *rand.Rand) []segment {
	segs := plantText(rng)
	for i, s := range segs {
		if s.kind == "ticket" {
			segs[i] = segment{text: "ticket"}
		}
	}
	return segs
}
