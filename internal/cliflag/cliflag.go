// Package cliflag words the flag package's parse errors the way the
// project's commands print them: "unknown flag -x", "flag -x needs a
// value", "invalid value … for flag --x".
package cliflag

import "strings"

// Message is the one-line problem of a flag parse error err (not
// flag.ErrHelp), in the commands' wording.
func Message(err error) string {
	msg := err.Error()
	if name, found := strings.CutPrefix(msg, "flag provided but not defined: "); found {
		return "unknown flag -" + name
	}
	if name, found := strings.CutPrefix(msg, "flag needs an argument: "); found {
		return "flag -" + name + " needs a value"
	}
	if rest, found := strings.CutPrefix(msg, "invalid value "); found {
		return "invalid value " + strings.Replace(rest, " for flag -", " for flag --", 1)
	}
	return msg
}
