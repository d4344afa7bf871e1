package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// Real-looking secrets of every built-in kind (none of them valid).
const (
	tSK      = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
	tSKAnt   = "sk-ant-api03-q1W2e3R4t5Y6u7I8o9P0aSdFgHjKl-ZxCvBnM_AA"
	tAWS     = "AKIAIOSFODNN7EXAMPLE"
	tASIA    = "ASIA4XYZ2ABCDEFGHIJK"
	tGHP     = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
	tPAT     = "github_pat_11ABCDEFG0123456789abc_defghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcdefgh"
	tJWT     = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	tPEM     = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MZ\nq5v8Wj2n0Qe7e0l\n-----END RSA PRIVATE KEY-----"
	tPGP     = "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBF0abc\n=abcd\n-----END PGP PRIVATE KEY BLOCK-----"
	tOpenSSH = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
)

func TestDetectors(t *testing.T) {
	tests := map[string]struct{ in, want string }{
		"sk key":              {"key " + tSK + " end", "key [REDACTED:api_key] end"},
		"anthropic key":       {"ANTHROPIC_API_KEY=" + tSKAnt + "\n", "ANTHROPIC_API_KEY=[REDACTED:api_key]\n"},
		"sk key quoted":       {`"` + tSK + `"`, `"[REDACTED:api_key]"`},
		"sk at start and end": {tSK, "[REDACTED:api_key]"},
		"aws":                 {"id=" + tAWS + ".", "id=[REDACTED:aws_access_key]."},
		"aws asia":            {tASIA, "[REDACTED:aws_access_key]"},
		"github classic":      {"token: " + tGHP + " ok", "token: [REDACTED:github_token] ok"},
		"github gho":          {"gho_" + tGHP[4:], "[REDACTED:github_token]"},
		"github pat":          {"(" + tPAT + ")", "([REDACTED:github_token])"},
		"bearer jwt":          {"Authorization: Bearer " + tJWT + "\n", "Authorization: Bearer [REDACTED:bearer_token]\n"},
		"bearer padded":       {"bearer abcDEF123456ghiJKL789== x", "bearer [REDACTED:bearer_token] x"},
		"bearer tab":          {"BEARER\tabcdef0123456789abcdef", "BEARER\t[REDACTED:bearer_token]"},
		"pem rsa":             {"key:\n" + tPEM + "\nafter", "key:\n[REDACTED:private_key]\nafter"},
		"pem pgp":             {tPGP + " x", "[REDACTED:private_key] x"},
		"pem openssh":         {"a " + tOpenSSH, "a [REDACTED:private_key]"},
		"two secrets":         {tAWS + " and " + tGHP, "[REDACTED:aws_access_key] and [REDACTED:github_token]"},
		"bearer holding sk":   {"Bearer " + tSK, "Bearer [REDACTED:bearer_token]"},
		"unicode around":      {"é " + tSK + " 世界", "é [REDACTED:api_key] 世界"},
		"marker idempotent":   {"[REDACTED:api_key] [REDACTED:bearer_token] [REDACTED:github_token]", "[REDACTED:api_key] [REDACTED:bearer_token] [REDACTED:github_token]"},

		// Near misses: ordinary text must come through untouched.
		"task-":             {"task-manager-configuration-file-with-numbers-123", ""},
		"risk-free":         {"a risk-free sk-learn install", ""},
		"sk short":          {"sk-1234567890abcdefghi", ""},
		"sk no digit":       {"sk-this-is-not-a-key-just-hyphenated-words", ""},
		"sk no letter":      {"sk-123456789012345678901234", ""},
		"sk after word":     {"mask-abcdefghij1234567890abcdef", ""},
		"sk after unicode":  {"ésk-abcdefghij1234567890abcdef", ""},
		"aws lower":         {"akiaiosfodnn7example", ""},
		"aws too long":      {"AKIAIOSFODNN7EXAMPLEX", ""},
		"aws too short":     {"AKIAIOSFODNN7EXAMPL", ""},
		"aws inside word":   {"XAKIAIOSFODNN7EXAMPLE", ""},
		"aws bad prefix":    {"AKIBIOSFODNN7EXAMPLE", ""},
		"github short":      {"ghp_abc123", ""},
		"github wrong type": {"ghx_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", ""},
		"github in word":    {"xghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", ""},
		"github_pat short":  {"github_pat_abc", ""},
		"bearer prose":      {"the bearer of bad news is a Bearer of good news", ""},
		"bearer word token": {"Bearer YOUR_ACCESS_TOKEN_GOES_HERE", ""},
		"bearer short":      {"Bearer abc123", ""},
		"bearer placeholder": {
			"Authorization: Bearer <token>", ""},
		"forbearer":       {"forbearer abcdef0123456789abcdef", ""},
		"bearer spaces":   {"Bearer      abcdef0123456789abcdef", ""},
		"pem certificate": {"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", ""},
		"pem public key":  {"-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", ""},
		"markdown rule":   {"title\n-----\ntext ----- more", ""},
		"dashes":          {"----------BEGIN", ""},
		"empty":           {"", ""},
	}
	r := Default()
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if got := r.String(tc.in); got != want {
				t.Errorf("String(%q)\n got %q\nwant %q", tc.in, got, want)
			}
			// The same result whatever the split.
			for _, parts := range [][]string{bytesOf(tc.in), randomSplit(rand.New(rand.NewPCG(1, uint64(len(tc.in)))), tc.in)} {
				st := r.Stream()
				var b strings.Builder
				for _, p := range parts {
					b.WriteString(st.Push(p))
				}
				b.WriteString(st.Flush())
				if b.String() != want {
					t.Errorf("streamed %q\n got %q\nwant %q", parts, b.String(), want)
				}
			}
		})
	}
}

func bytesOf(s string) []string {
	out := make([]string, len(s))
	for i := 0; i < len(s); i++ {
		out[i] = s[i : i+1]
	}
	return out
}

func randomSplit(rng *rand.Rand, s string) []string {
	var out []string
	for len(s) > 0 {
		n := 1 + rng.IntN(min(len(s), 12))
		if rng.IntN(8) == 0 {
			out = append(out, "") // empty deltas happen too
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// Text that is not a possible secret start is released at once.
func TestStreamReleasesAtOnce(t *testing.T) {
	r := Default()
	tests := []struct {
		pushes   []string
		released []string
	}{
		{[]string{"hello ", "world"}, []string{"hello ", "world"}},
		{[]string{"use sk", "-pro", "j-x y"}, []string{"use ", "", "sk-proj-x y"}},
		{[]string{"a -", "----B", "EGIN CERT", "IFICATE----", "-\n"}, []string{"a ", "", "", "-----BEGIN CERTIFICATE", "-----\n"}},
		{[]string{"Bear", "er ", "abc def"}, []string{"", "", "Bearer abc def"}},
		{[]string{"x " + tGHP[:10], tGHP[10:] + " y"}, []string{"x ", "[REDACTED:github_token] y"}},
		{[]string{tPEM[:40], tPEM[40:80], tPEM[80:] + "!"}, []string{"[REDACTED:private_key]", "", "!"}},
	}
	for _, tc := range tests {
		st := r.Stream()
		for i, p := range tc.pushes {
			if got := st.Push(p); got != tc.released[i] {
				t.Errorf("%q: push %d released %q, want %q (pending %q)", tc.pushes, i, got, tc.released[i], st.Pending())
			}
		}
		if got := st.Flush(); got != "" {
			t.Errorf("%q: flush released %q", tc.pushes, got)
		}
	}
}

func TestFlushReleasesUnconfirmedPrefix(t *testing.T) {
	st := Default().Stream()
	if got := st.Push("see sk-abc"); got != "see " {
		t.Fatalf("push: %q", got)
	}
	if got := st.Flush(); got != "sk-abc" {
		t.Fatalf("flush: %q", got)
	}
	if got := st.Push("next"); got != "next" {
		t.Fatalf("after flush: %q", got)
	}
}

func TestPrivateKeyCap(t *testing.T) {
	r, err := New(Config{MaxPrivateKeyBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	in := "-----BEGIN PRIVATE KEY-----\n" + strings.Repeat("A", 100) + " visible"
	want := "[REDACTED:private_key] visible"
	if got := r.String(in); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	st := r.Stream()
	got := ""
	for _, p := range bytesOf(in) {
		got += st.Push(p)
	}
	if got += st.Flush(); got != want {
		t.Errorf("streamed %q, want %q", got, want)
	}
}

func TestConfig(t *testing.T) {
	r, err := New(Config{Builtins: []string{KindAWSAccessKey}})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.String(tSK + " " + tAWS); got != tSK+" [REDACTED:aws_access_key]" {
		t.Errorf("only aws: %q", got)
	}
	none, err := New(Config{Builtins: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if got := none.String(tSK); got != tSK {
		t.Errorf("no detectors: %q", got)
	}
	if _, err := New(Config{Builtins: []string{"nope"}}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown builtin: %v", err)
	}
	if got := Default().Kinds(); strings.Join(got, ",") != strings.Join(Builtins, ",") {
		t.Errorf("Kinds = %v", got)
	}
}

func TestPatterns(t *testing.T) {
	tests := map[string]struct {
		p        Pattern
		in, want string
		maxLen   int
	}{
		"fixed":             {Pattern{Kind: "ticket", Regexp: `TCK-[0-9]{6}`}, "see TCK-123456 and TCK-12", "see [REDACTED:ticket] and TCK-12", 10},
		"unbounded default": {Pattern{Regexp: `password=\S+`}, "password=hunter2 ok", "[REDACTED:custom] ok", DefaultPatternMaxLen},
		"explicit cap":      {Pattern{Regexp: `x[a-z]+`, MaxLen: 4}, "xabcdefg", "[REDACTED:custom]efg", 4},
		"fold":              {Pattern{Kind: "pw", Regexp: `(?i)secret:[0-9]+`}, "SeCrEt:42!", "[REDACTED:pw]!", 0},
		"word boundary":     {Pattern{Kind: "w", Regexp: `\bkey[0-9]+`}, "monkey123 key456", "monkey123 [REDACTED:w]", 0},
		"line start":        {Pattern{Kind: "l", Regexp: `(?m)^PASS [a-z]+`}, "a PASS x\nPASS word", "a PASS x\n[REDACTED:l]", 0},
		"text start":        {Pattern{Kind: "s", Regexp: `^TOP[0-9]`}, "TOP1 TOP2", "[REDACTED:s] TOP2", 0},
		"unicode":           {Pattern{Kind: "u", Regexp: `秘密[0-9]{3}`}, "é秘密123x", "é[REDACTED:u]x", 0},
		"end anchored":      {Pattern{Kind: "e", Regexp: `END[0-9]$`}, "END1 END2", "END1 [REDACTED:e]", 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := New(Config{Builtins: []string{}, Patterns: []Pattern{tc.p}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.maxLen > 0 && r.MaxHold() != tc.maxLen {
				t.Errorf("MaxHold = %d, want %d", r.MaxHold(), tc.maxLen)
			}
			if got := r.String(tc.in); got != tc.want {
				t.Errorf("String = %q, want %q", got, tc.want)
			}
			for seed := range uint64(20) {
				parts := randomSplit(rand.New(rand.NewPCG(seed, 7)), tc.in)
				if seed == 0 {
					parts = bytesOf(tc.in)
				}
				st := r.Stream()
				got := ""
				for _, p := range parts {
					got += st.Push(p)
				}
				if got += st.Flush(); got != tc.want {
					t.Errorf("streamed %q: %q, want %q", parts, got, tc.want)
				}
			}
		})
	}
}

func TestPatternErrors(t *testing.T) {
	for _, p := range []Pattern{
		{Regexp: `(`},
		{Regexp: `a*`},
		{Regexp: `x`, MaxLen: -1},
		{Regexp: `x`, MaxLen: MaxPatternMaxLen + 1},
	} {
		if _, err := New(Config{Patterns: []Pattern{p}}); err == nil || !strings.HasPrefix(err.Error(), "redact: pattern") {
			t.Errorf("%+v: err = %v", p, err)
		}
	}
}

func TestPatternHold(t *testing.T) {
	// A pattern with a literal start holds back only text that can begin it.
	r, err := New(Config{Builtins: []string{}, Patterns: []Pattern{{Regexp: `(?i)password=\S+`}}})
	if err != nil {
		t.Fatal(err)
	}
	st := r.Stream()
	if got := st.Push("please pass the "); got != "please pass the " {
		t.Errorf("released %q (pending %q)", got, st.Pending())
	}
	if got := st.Push("PassWord=abc"); got != "" || st.Pending() != "PassWord=abc" {
		t.Errorf("released %q, pending %q", got, st.Pending())
	}
	if got := st.Push("def next"); got != "[REDACTED:custom] next" {
		t.Errorf("released %q", got)
	}
}

func TestNilRedactor(t *testing.T) {
	var r *Redactor
	st := r.Stream()
	if got := st.Push(tSK) + st.Flush(); got != tSK || r.String(tSK) != tSK || r.MaxHold() != 0 || r.Kinds() != nil || r.JSON(`"`+tSK+`"`) != `"`+tSK+`"` {
		t.Errorf("nil redactor changed text: %q", got)
	}
}
