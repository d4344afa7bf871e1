package serveconfig

import (
	"strings"
	"testing"

	"github.com/harnessflow/harnessflow/stages/operator"
)

const stageBase = "[upstreams.local]\nbase_url = \"http://h/v1\"\n[[models]]\nname = \"m\"\nupstreams = [\"local\"]\n"

// [[stage]] tables make operator stages in the file's order; a bad kind or
// option is an error at its table's line naming the kind and the option.
func TestStages(t *testing.T) {
	c, err := Parse([]byte(stageBase+"[[stage]]\nkind = \"redact\"\npatterns = [\"ACME-[0-9]{6}\"]\n[[stage]]\nkind = \"log-events\"\n"), "F", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, s := range c.Stages {
		kinds = append(kinds, s.Kind().Name)
	}
	if got := strings.Join(kinds, ","); got != operator.KindRedact+","+operator.KindLogEvents {
		t.Errorf("stages %s", got)
	}
	if c, err := Parse([]byte(stageBase), "F", Options{}); err != nil || len(c.Stages) != 0 {
		t.Errorf("no [[stage]]: %v, %d stages", err, len(c.Stages))
	}
	for _, tt := range []struct{ name, doc, want string }{
		{"no kind", "[[stage]]\npatterns = [\"x+\"]\n", `F:6: [[stage]] entry 1: no kind (want one of log-events, record, redact`},
		{"unknown kind", "[[stage]]\nkind = \"redakt\"\n", `F:6: [[stage]] entry 1: operator: unknown stage kind "redakt"`},
		{"unknown option", "[[stage]]\nkind = \"redact\"\n[[stage]]\nkind = \"redact\"\npattern = [\"x+\"]\n", `F:8: [[stage]] entry 2: operator: stage "redact": unknown option "pattern" (want patterns)`},
		{"bad option type", "[[stage]]\nkind = \"record\"\ndir = 3\n", `F:6: [[stage]] entry 1: operator: stage "record": option "dir": want a string, got a number`},
		{"bad pattern", "[[stage]]\nkind = \"redact\"\npatterns = [\"(\"]\n", `F:6: [[stage]] entry 1: operator: stage "redact": option "patterns": `},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(stageBase+tt.doc), "F", Options{})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v\nwant %s", err, tt.want)
			}
		})
	}
}
