package cliflag

import (
	"flag"
	"io"
	"testing"
)

func TestMessage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--nope"}, "unknown flag --nope"},
		{[]string{"--n"}, "flag --n needs a value"},
		{[]string{"--n", "x"}, `invalid value "x" for flag --n: parse error`},
		{[]string{"--v=maybe"}, `invalid boolean value "maybe" for -v: parse error`},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Int("n", 0, "")
		fs.Bool("v", false, "")
		err := fs.Parse(c.args)
		if err == nil {
			t.Fatalf("%v: no error", c.args)
		}
		if got := Message(err); got != c.want {
			t.Errorf("%v: %q, want %q", c.args, got, c.want)
		}
	}
}
