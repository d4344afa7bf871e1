package terminus2

import (
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/harness/bridge"
)

// Exec is how the keystrokes reach a terminal.
type Exec string

// The execution modes.
const (
	// ExecTmux types them into a tmux session, as the original does.
	ExecTmux Exec = "tmux"
	// ExecPlain runs each typed line with bash, for clients whose machine
	// has no tmux (see plainScript).
	ExecPlain Exec = "plain"
)

// ParseOptions reads the harness variant a model-capabilities entry picks
// ({"variants":{"terminus-2":"…"}}): a comma-separated list of a reply
// format (json, xml) and an execution mode (tmux, plain), e.g. "xml" or
// "json,plain". "" is the defaults.
func ParseOptions(s string) (Options, error) {
	o := DefaultOptions()
	var format, exec bool
	for _, tok := range strings.Split(s, ",") {
		switch t := strings.ToLower(strings.TrimSpace(tok)); t {
		case "":
		case string(VariantJSON), string(VariantXML):
			if format {
				return Options{}, fmt.Errorf("terminus-2: variant %q names two reply formats", s)
			}
			o.Variant, format = Variant(t), true
		case string(ExecTmux), string(ExecPlain):
			if exec {
				return Options{}, fmt.Errorf("terminus-2: variant %q names two execution modes", s)
			}
			o.Exec, exec = Exec(t), true
		default:
			return Options{}, fmt.Errorf("terminus-2: unknown variant %q in %q: want json or xml, tmux or plain", t, s)
		}
	}
	return o, nil
}

// plainOp is one step of a plain-mode batch.
type plainOp struct {
	kind byte   // 'r' run the held text and this line, 'h' hold text, 'c' interrupt
	text string // the line (without its newline) or the text to hold
}

// plainOps splits keystrokes into steps: every newline runs what was typed
// before it, text after the last newline is held for the next keystrokes,
// C-c drops the held text; other key names do nothing.
func plainOps(keys string) []plainOp {
	switch {
	case keys == "":
		return nil
	case keys == "C-c":
		return []plainOp{{kind: 'c'}}
	case isKeyName(keys):
		return nil
	}
	var ops []plainOp
	for {
		i := strings.IndexByte(keys, '\n')
		if i < 0 {
			break
		}
		ops = append(ops, plainOp{'r', strings.TrimSuffix(keys[:i], "\r")})
		keys = keys[i+1:]
	}
	if keys != "" {
		ops = append(ops, plainOp{'h', keys})
	}
	return ops
}

// isKeyName reports whether s looks like a tmux key name (Escape, C-d,
// M-x, F5, Up …) rather than text: one word of letters, digits and dashes
// that starts with a capital letter.
func isKeyName(s string) bool {
	if len(s) < 2 || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// plainScript is the bash script of a batch without tmux. The terminal is
// a log file in the same state directory as the tmux session's: each line
// the keystrokes complete is written after the prompt, run by bash in the
// directory the last line left (and with the variables it exported), its
// output appended; text without a newline waits for the next keystrokes.
// The output has the same three sections as the tmux script's: the screen
// is the log's last 40 lines, the new part is the log from the previous
// batch's prompt line on. There is no interactive terminal: programs that
// wait for input read an empty stdin, a key name other than C-c does
// nothing, durations are not waited for (each line runs to its end) and a
// line still running at the batch's deadline is stopped.
func (t *texts) plainScript(cmds []Command, deadline int64) string {
	var b strings.Builder
	q := bridge.Quote
	fmt.Fprintf(&b, `set -e
home=${INTERPRETER_HOME:-${CODEX_HOME:-$PWD}}
session=${INTERPRETER_TERMINUS_2_TMUX_SESSION:-oi-terminus-2-$(printf %%s "$home" | cksum | cut -d ' ' -f 1)}
state=$home/.terminus-2
mkdir -p "$state"
log=$state/$session.plain
pos=$state/$session.plain-pos
dir=$state/$session.plain-dir
vars=$state/$session.plain-env
held=$state/$session.plain-held
prefix=%s
deadline=$((SECONDS + %d))
[ -f "$dir" ] || printf '%%s' "$PWD" > "$dir"
[ -f "$vars" ] || : > "$vars"
[ -f "$held" ] || : > "$held"
if [ ! -f "$log" ]; then printf '%%s%%s# ' "$prefix" "$(cat "$dir")" > "$log"; fi
[ -f "$pos" ] || echo 0 > "$pos"
run() {
  line=$(cat "$held")$1
  : > "$held"
  printf '%%s\n' "$1" >> "$log"
  left=$((deadline - SECONDS))
  if [ "$left" -lt 1 ]; then left=1; fi
  ( cd "$(cat "$dir")" 2>/dev/null || true
    . "$vars"
    set +e
    timeout --kill-after=1s "${left}s" bash -c "$line"'
pwd > "$0.dir.new"; export -p | grep -Ev "^declare -x (PWD|OLDPWD|SHLVL|_)=" > "$0.env.new"' "$state/$session" < /dev/null
    code=$?
    if [ "$code" -eq 124 ] || [ "$code" -eq 137 ]; then printf '[stopped after %%ss]\n' "$left"; fi
    [ -s "$state/$session.dir.new" ] && mv "$state/$session.dir.new" "$dir"
    [ -f "$state/$session.env.new" ] && mv "$state/$session.env.new" "$vars"
    true
  ) >> "$log" 2>&1
  printf '%%s%%s# ' "$prefix" "$(cat "$dir")" >> "$log"
}
hold() { printf '%%s' "$1" >> "$held"; printf '%%s' "$1" >> "$log"; }
interrupt() { : > "$held"; printf '^C\n%%s%%s# ' "$prefix" "$(cat "$dir")" >> "$log"; }
`, q(t.promptPrefix()), deadline)
	for _, c := range cmds {
		for _, op := range plainOps(c.Keystrokes) {
			switch op.kind {
			case 'r':
				fmt.Fprintf(&b, "run %s\n", q(op.text))
			case 'h':
				fmt.Fprintf(&b, "hold %s\n", q(op.text))
			case 'c':
				b.WriteString("interrupt\n")
			}
		}
	}
	fmt.Fprintf(&b, `start=$(cat "$pos")
printf '%%s\n%%s\n%%s\n' %s %s %s
{ cat "$log"; echo; } | tail -n %d | awk '{ sub(/[[:space:]]+$/, "") } { print } END { for (i = NR; i < %d; i++) print "" }'
printf '%%s\n%%s\n' %s %s
if [ "$start" -gt 0 ]; then echo; fi
tail -c +$((start + 1)) "$log"; echo
printf '%%s\n' %s
size=$(wc -c < "$log")
last=$(tail -n 1 "$log" | wc -c)
echo $((size - last)) > "$pos"
`, q(t.m[markerPrevStart]), q(t.m[markerPrevEnd]), q(t.m[markerScreenStart]), ScreenRows, ScreenRows,
		q(t.m[markerScreenEnd]), q(t.m[markerCurStart]), q(t.m[markerCurEnd]))
	return b.String()
}
