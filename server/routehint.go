package server

import (
	"strings"

	"github.com/harnessflow/harnessflow/harness"
)

// routeHint follows a routing error's text (docs/routing.md#routing-matrix,
// kept exact) with the fix in harnessflow's own terms: the routes of this
// proxy that serve its upstream wire, and the --upstream-wire that serves
// the harness asked for, among the harnesses of reg.
func routeHint(reg *harness.Registry, wire harness.Wire, name string) string {
	var routes []string
	for _, s := range reg.All() {
		if s.Supports(wire) && s.Name != harness.NativeName {
			routes = append(routes, "/h/"+s.Name+"/v1")
		}
	}
	var b strings.Builder
	b.WriteString(" — harnessflow: ")
	if name == "" || name == harness.NativeName {
		b.WriteString("the native route has no translation to the " + string(wire) + " wire")
	} else {
		b.WriteString("harness " + name + " is not served on --upstream-wire " + string(wire))
		if s, ok := reg.Lookup(name); ok && len(s.Wires) > 0 {
			ws := make([]string, len(s.Wires))
			for i, w := range s.Wires {
				ws[i] = string(w)
			}
			b.WriteString(" (it is on " + strings.Join(ws, ", ") + ": run serve with --upstream-wire " + ws[0] + " against such a server)")
		}
	}
	if len(routes) > 0 {
		b.WriteString("; this proxy's " + string(wire) + " routes are " + strings.Join(routes, ", ") +
			" (set base_url to http://HOST:PORT/h/NAME/v1)")
	}
	return b.String()
}
