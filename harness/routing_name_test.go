package harness_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/harness"
	_ "github.com/harnessflow/harnessflow/harness/all"
)

// CheckName and CheckRoute: every name the build does not serve is refused
// with one message naming the nearest registered name and all of them; a
// registered harness on a wire it does not shape is refused with the fix.
func TestCheckRoute(t *testing.T) {
	var avail []string
	for _, s := range harness.All() {
		avail = append(avail, s.Name)
	}
	list := "available: " + strings.Join(avail, ", ") + ")"
	cases := []struct {
		wire harness.Wire
		name string
		want string // "" for nil; else the exact error text
	}{
		{harness.WireChat, "", ""},
		{harness.WireChat, "native", ""},
		{harness.WireChat, "kimi-cli", ""},
		{harness.WireMessages, "zcode", ""},
		{harness.WireResponses, "claude-code", ""},
		// Left to Resolve's RouteError.
		{harness.WireMessages, "kimi-cli", ""},
		{harness.WireMessages, "native", ""},
		{harness.WireChat, "kimi_cli", `unknown harness "kimi_cli" (did you mean "kimi-cli"? ` + list},
		{harness.WireChat, "KIMI-CLI", `unknown harness "KIMI-CLI" (did you mean "kimi-cli"? ` + list},
		{harness.WireChat, "swe_agent", `unknown harness "swe_agent" (did you mean "swe-agent"? ` + list},
		{harness.WireChat, "nosuch", `unknown harness "nosuch" (` + list},
		{harness.WireMessages, "nosuch", `unknown harness "nosuch" (` + list},
		{harness.WireChat, "zcode", `harness "zcode" does not shape chat requests (it shapes messages); use --upstream-wire messages`},
		{harness.WireResponses, "zcode", `harness "zcode" does not shape responses requests (it shapes messages); use --upstream-wire messages`},
		{harness.WireResponses, "kimi-cli", `harness "kimi-cli" does not shape responses requests (it shapes chat); use --upstream-wire chat`},
	}
	for _, c := range cases {
		err := harness.CheckRoute(c.wire, c.name)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("CheckRoute(%s, %q) = %q, want %q", c.wire, c.name, got, c.want)
		}
	}
	// A name of the routing table no package of this test binary registers
	// (the package's own tests register some of them).
	for _, name := range harness.KnownNames() {
		if _, ok := harness.Lookup(name); ok {
			continue
		}
		want := `unknown harness "` + name + `" (not in this build; ` + list
		if err := harness.CheckRoute(harness.WireChat, name); err == nil || err.Error() != want {
			t.Errorf("CheckRoute(chat, %q) = %v, want %q", name, err, want)
		}
	}
	var ue *harness.UnknownHarnessError
	if err := harness.CheckName("kimi_cli"); !errors.As(err, &ue) || ue.Nearest != "kimi-cli" {
		t.Errorf("CheckName(kimi_cli) = %v", err)
	}
	we := &harness.WireError{Harness: "zcode", Wire: harness.WireChat, Shapes: []harness.Wire{harness.WireMessages}, Flag: "--wire"}
	if got := we.Error(); !strings.HasSuffix(got, "use --wire messages") {
		t.Errorf("WireError with Flag: %q", got)
	}
}
