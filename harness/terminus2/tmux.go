package terminus2

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/harnessflow/harnessflow/harness/bridge"
	"github.com/harnessflow/harnessflow/protocol"
)

// Timing of a shell call.
const (
	// MaxTimeoutMS caps the time one batch of commands may take.
	MaxTimeoutMS = 180_000
	// promptWaitMS is the allowance per command for the prompt to return.
	promptWaitMS = 8000
	// baseTimeoutMS is the allowance of a batch for starting tmux and
	// capturing the pane.
	baseTimeoutMS = 10_000
	// clientGraceMS is added to the client's timeout over the script's own.
	clientGraceMS = 3000
	// promptWaitS is how long, in seconds, the script looks for the prompt
	// (every 0.1 s) after a command that ends with a newline (or C-c).
	promptWaitS = 5
	// literalChunk is the longest keystroke text sent in one send-keys
	// (tmux limits the size of one command).
	literalChunk = 2048
)

// CallIDPrefix starts the call id of every shell call the harness makes;
// the number after it counts the calls of the conversation from 0.
const CallIDPrefix = "terminus-2-shell-"

// shellEnv is set for the commands (in the call and in the tmux shell):
// pagers that the model can drive, and git's decorations kept short.
var shellEnv = map[string]string{
	"PAGER":              "less",
	"GIT_PAGER":          "less",
	"GIT_CONFIG_COUNT":   "1",
	"GIT_CONFIG_KEY_0":   "log.decorate",
	"GIT_CONFIG_VALUE_0": "short",
}

// shellEnvOrder is shellEnv's keys in a fixed order.
var shellEnvOrder = [...]string{"PAGER", "GIT_PAGER", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"}

// shellOptions shape the shell call of one turn.
type shellOptions struct {
	// workdir is where a new terminal session starts.
	workdir string
	// n numbers the call (its call id).
	n int
	// exec is how the keystrokes reach a terminal.
	exec Exec
	// waitBudget, when positive, caps the seconds the batch may spend
	// waiting (sleeps and prompt polls): the client returns a command's
	// output only if it ends within its own wait (Codex's exec_command
	// waits at most 30 s).
	waitBudget float64
}

// shellCall turns a batch of commands into one local_shell_call that drives
// the tmux session (see script). An empty batch only captures the pane.
func (t *texts) shellCall(cmds []Command, o shellOptions) *protocol.LocalShellCall {
	sleeps := make([]float64, len(cmds))
	total := 0.0
	for i, c := range cmds {
		d := effectiveDuration(c.Duration)
		if o.waitBudget > 0 {
			d = math.Max(0, math.Min(d, o.waitBudget-total))
		}
		sleeps[i] = d
		total += d
	}
	timeoutMS := int64(math.Ceil(total*1000 + baseTimeoutMS + promptWaitMS*float64(len(cmds))))
	timeoutMS = min(max(timeoutMS, 1000), MaxTimeoutMS)
	timeoutS := (timeoutMS + 999) / 1000
	deadline := int64(math.Ceil(total)) + int64(len(cmds))*promptWaitS + 3
	if o.waitBudget > 0 {
		deadline = min(deadline, int64(math.Ceil(o.waitBudget))+3)
	}
	var script string
	if o.exec == ExecPlain { // lines run to their end: all the time there is
		deadline = max(timeoutS-5, 1)
		if o.waitBudget > 0 {
			deadline = int64(math.Ceil(o.waitBudget)) + 3
		}
		script = t.plainScript(cmds, deadline)
	} else {
		script = t.script(cmds, sleeps, deadline)
	}
	id := CallIDPrefix + strconv.Itoa(o.n)
	env := make(map[string]string, len(shellEnv))
	for k, v := range shellEnv {
		env[k] = v
	}
	client := uint64(timeoutMS + clientGraceMS)
	wd := o.workdir
	return &protocol.LocalShellCall{
		ID:     id,
		CallID: &id,
		Status: "in_progress",
		Action: protocol.LocalShellAction{
			Type:             "exec",
			Command:          []string{"timeout", "--kill-after=2s", strconv.FormatInt(timeoutS, 10) + "s", "bash", "-lc", script},
			TimeoutMS:        &client,
			WorkingDirectory: &wd,
			Env:              env,
		},
	}
}

// script is the bash script of a batch. It
//
//  1. names the session $INTERPRETER_TERMINUS_2_TMUX_SESSION, or
//     oi-terminus-2-<cksum of ${INTERPRETER_HOME:-${CODEX_HOME:-$PWD}}>,
//     and keeps its state in that home's .terminus-2 directory; the
//     session runs on a tmux server of its own (socket named after the
//     session, no tmux.conf), so neither the user's tmux server nor its
//     configuration is touched;
//  2. starts the session when it is not running: 160×40, no status line,
//     50000 lines of history, bash without profile or rc files whose prompt
//     is root@HOST:$PWD# (the full path, never ~), in the call's working
//     directory;
//  3. keeps the buffer as it was before the first batch;
//  4. per command: sends the keystrokes (a whole tmux key name such as C-c,
//     C-d or Escape is that key; other text is typed as it is, in literal
//     chunks when long; empty keystrokes send nothing), sleeps the
//     command's duration and, when the keystrokes end in a newline or are
//     C-c, polls up to 5 s for the prompt to return — never past the
//     batch's deadline;
//  5. prints the three sections between their markers: the previous
//     buffer (always empty: the script itself compares the buffers), the
//     screen, and the current buffer from the previous buffer's last line
//     on — empty when the previous buffer is no longer found in it;
//  6. keeps the current buffer for the next batch.
func (t *texts) script(cmds []Command, sleeps []float64, deadline int64) string {
	var b strings.Builder
	q := bridge.Quote
	shell := "env " + q("PS1="+t.promptPrefix()+"$PWD# ")
	for _, k := range shellEnvOrder {
		shell += " " + k + "=" + q(shellEnv[k])
	}
	shell += " bash --noprofile --norc -i"
	fmt.Fprintf(&b, `set -e
home=${INTERPRETER_HOME:-${CODEX_HOME:-$PWD}}
session=${INTERPRETER_TERMINUS_2_TMUX_SESSION:-oi-terminus-2-$(printf %%s "$home" | cksum | cut -d ' ' -f 1)}
state=$home/.terminus-2
mkdir -p "$state"
prev=$state/$session.previous
cur=$state/$session.current
scr=$state/$session.screen
prefix=%s
deadline=$((SECONDS + %d))
t() { tmux -L "$session" -f /dev/null "$@"; }
at_prompt() {
  last=$(t capture-pane -p -t "$session" | awk 'NF { l = $0 } END { sub(/[[:space:]]+$/, "", l); print l }')
  case $last in "$prefix"*'#') return 0 ;; esac
  return 1
}
wait_prompt() {
  until=$((SECONDS + %d))
  while [ "$SECONDS" -lt "$until" ] && [ "$SECONDS" -lt "$deadline" ] && ! at_prompt; do sleep 0.1; done
}
send() { if [ -n "$1" ]; then t send-keys -t "$session" -- "$1"; fi; }
if ! t has-session -t "=$session" 2>/dev/null; then
  rm -f "$prev"
  t start-server \; set-option -g history-limit 50000 \; set-option -g status off \; new-session -d -s "$session" -x %d -y %d -c "$PWD" %s
  wait_prompt
fi
t resize-window -t "$session" -x %d -y %d >/dev/null 2>&1 || true
[ -f "$prev" ] || t capture-pane -p -t "$session" -S - > "$prev"
`, q(t.promptPrefix()), deadline, promptWaitS, ScreenCols, ScreenRows, q(shell), ScreenCols, ScreenRows)
	for i, c := range cmds {
		k := c.Keystrokes
		if len(k) <= literalChunk {
			fmt.Fprintf(&b, "send %s\n", q(k))
		} else {
			for _, part := range chunks(k, literalChunk) {
				fmt.Fprintf(&b, "t send-keys -l -t \"$session\" -- %s\n", q(part))
			}
		}
		if sleeps[i] > 0 {
			fmt.Fprintf(&b, "sleep %s\n", strconv.FormatFloat(sleeps[i], 'f', -1, 64))
		}
		if strings.HasSuffix(k, "\n") || k == "C-c" {
			b.WriteString("wait_prompt\n")
		}
	}
	fmt.Fprintf(&b, `t capture-pane -p -t "$session" -S - > "$cur"
t capture-pane -p -t "$session" > "$scr"
printf '%%s\n%%s\n%%s\n' %s %s %s
cat "$scr"
printf '%%s\n%%s\n' %s %s
awk '%s' "$prev" "$cur"
printf '%%s\n' %s
cp "$cur" "$prev"
`, q(t.m[markerPrevStart]), q(t.m[markerPrevEnd]), q(t.m[markerScreenStart]),
		q(t.m[markerScreenEnd]), q(t.m[markerCurStart]), newPartAwk, q(t.m[markerCurEnd]))
	return b.String()
}

// newPartAwk prints the current buffer (second file) from the previous
// buffer's (first file) last non-blank line on, the way newContent reads
// the two buffers: the previous buffer, stripped of surrounding white
// space, must occur in the current one; a one-line previous buffer starts
// the new part where it occurs, a longer one at the start of the line
// holding its last line, after an empty line. A blank previous buffer makes
// everything new; a previous buffer not found prints nothing.
const newPartAwk = `NR == FNR { p[++np] = $0; next }
{ c[++nc] = $0 }
END {
  for (f = 1; f <= np && p[f] !~ /[^[:space:]]/; f++) ;
  for (k = np; k >= f && p[k] !~ /[^[:space:]]/; k--) ;
  if (f > k) { for (i = 1; i <= nc; i++) print c[i]; exit }
  first = p[f]; sub(/^[[:space:]]+/, "", first)
  last = p[k]; sub(/[[:space:]]+$/, "", last)
  if (f == k) {
    sub(/[[:space:]]+$/, "", first)
    for (j = 1; j <= nc; j++) {
      at = index(c[j], first)
      if (at > 0) { print substr(c[j], at); for (i = j + 1; i <= nc; i++) print c[i]; exit }
    }
    exit
  }
  span = k - f
  for (j = 1; j + span <= nc; j++) {
    if (length(c[j]) < length(first) || substr(c[j], length(c[j]) - length(first) + 1) != first) continue
    ok = 1
    for (i = 1; i < span && ok; i++) if (c[j + i] != p[f + i]) ok = 0
    if (!ok || index(c[j + span], last) != 1) continue
    print ""
    for (i = j + span; i <= nc; i++) print c[i]
    exit
  }
}`

// chunks cuts s into pieces of at most n bytes at character boundaries.
func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	return append(out, s)
}
