// Package bridge carries tool calls between a harness and the client.
//
// A harness shows the model its own tools (opencode's bash, read, edit, …;
// claude-code's Bash, Read, …) or extracts shell commands from the model's
// text. The client (Codex CLI) executes only the tools it advertised. The
// bridge turns every call the model makes into a call of the client's shell
// tool, turns the client's output framing back into plain output, and turns
// a client shell call of the history back into the native call the model
// made, so that nothing needs to be stored between requests.
//
// # The client's shell
//
// DetectShell picks the client's shell from the request's tools, in this
// order: a function exec_command (Codex 0.171: {cmd, workdir,
// yield_time_ms, …}); the built-in {"type":"local_shell"}; a function
// shell, shell_command, bash or run_shell_command whose "command" is an
// argv array (ShellArgv) or a string (handled like exec_command with the
// key "command"); any function with a string "cmd". Tools inside
// namespaces are never the shell (Codex's code mode, whose only shell is a
// JavaScript exec, has ShellNone); their names are still recorded as
// advertised.
//
// ClientShell.Item writes a ShellCall (argv or script, workdir, timeout,
// env) into that tool's schema:
//
//   - exec_command: {"cmd","workdir"?,"yield_time_ms"?}. An argv is joined
//     with POSIX quoting; ["bash","-lc",X] and sh -c X are just X.
//     yield_time_ms is not a timeout but how long Codex waits before it
//     answers: the timeout is clamped into the documented range (250..30000
//     ms, read from the parameter's description when it states one) and
//     sent only when the schema has the key. A command running longer
//     comes back early as "Process running with session ID N" and keeps
//     running; a native tool cannot poll it (write_stdin is not bridged).
//     Without a timeout, Codex's default yield (10 s) applies. max_output_tokens,
//     tty, login, sandbox_permissions and the rest are never set. Env goes
//     into the line (K=V before a simple command, export before a script);
//     a workdir the schema cannot take becomes "cd DIR || exit 1; ".
//   - shell (argv): {"command":[…],"workdir"?,"timeout_ms"?,"env"?}, each
//     only when the schema has it; a script runs as ["bash","-lc",SCRIPT];
//     what the schema lacks is written into the script, or env as an
//     "env K=V" argv prefix.
//   - local_shell: a local_shell_call, action {command, timeout_ms,
//     working_directory, env}; a script runs as ["bash","-lc",SCRIPT].
//   - none: an error; the stage then passes the call unchanged.
//
// A local_shell action's user is never set and is dropped when a
// local_shell_call goes to an exec_command or argv client.
//
// # Native tools
//
// A harness declares its bridge as a Table of Mappings, one per native
// tool: the tool name and a function from the call's JSON arguments to a
// ShellCall. The specs build the usual ones (the key names are
// configurable; unknown arguments are ignored):
//
//   - ShellSpec (bash, Bash): the command string (or argv), workdir and
//     timeout as they are. Options the client has no place for
//     (description, run_in_background) are lost.
//   - ReadSpec → ReadCommand: awk prints the lines numbered like cat -n
//     ("%6d\t"), from a 1-based offset (ZeroBased for 0-based tools), up to a
//     limit. No line truncation, no image or PDF reading, no binary
//     detection; a missing file or a directory fails with a message.
//   - WriteSpec → WriteCommand: mkdir -p of the parent, then printf '%s'
//     with the quoted content (no heredoc, so no delimiter can collide);
//     NUL bytes are written with printf '\000'. Replaces the file in place.
//   - EditSpec → EditCommand: exact-string replacement in portable awk
//     (index and substr over the file's lines, values passed in ENVIRON, so
//     nothing is a regular expression or an escape). Fails, changing
//     nothing, when old is missing or not unique without replace-all, or
//     equals new; keeps the final-newline state and the inode; not atomic;
//     old and new cannot hold NUL bytes; text files only. An empty old
//     creates the file when it is missing or empty.
//   - GlobSpec → GlobCommand: find over the regular files, .git pruned,
//     sorted bytewise (not by modification time). Braces expand; a pattern
//     without '/' matches file names at any depth; "**" segments match any
//     number of directories; matching is find -path, exact for patterns
//     without "**", but with "**" another '*' may cross directories too.
//     Symbolic links are not followed or listed.
//   - GrepSpec → GrepCommand: grep -rnIE (POSIX extended regular
//     expressions, not ripgrep's syntax: no \d, no lookaround), .git
//     skipped, binary files skipped, --include per brace alternative
//     (file names only). It prints path:line:text whatever output mode the
//     native tool asked for, and exits 1 when nothing matches.
//
// The commands are POSIX sh with coreutils, grep, find and a POSIX awk
// (tested under bash and dash, with mawk). Every user value is quoted with
// Quote. A command travels as one argument to the client's shell, and Linux
// limits one argument to 128 KiB: with the bridge comment (below) holding
// the native arguments too, a write or edit of more than about 60 KiB of
// text fails to start.
//
// # The stage
//
// Stage (node NodeBridge, after the protocol layer and harness.post)
// rewrites, per stream: a function_call of a mapped tool into the client's
// shell item, keeping call id and item id; a local_shell_call into the
// client's shell item when the client has exec_command or an argv shell
// (it passes as it is to a local_shell client). The added event of such a
// call is held until its done, with its tool_call_input deltas; when the
// call is rewritten, the deltas are dropped, since their text would not
// match the new arguments, and an added of the new item precedes its done.
// A call whose arguments do not parse, or that the client cannot take (no
// shell), is never dropped: its events pass unchanged and OnUnbridged is
// called. A function call of a tool without a mapping that the client did
// not advertise also passes unchanged and calls OnUnbridged (a tool the
// client found through tool_search is counted too). Everything else passes
// unchanged and in order; nothing is kept between runs.
//
// # Patches
//
// A mapping with a Patch (WritePatch for a whole-file write) reaches a
// client that advertised apply_patch — Codex's freeform custom tool, or a
// function taking {"input"} — as an apply_patch call instead of a shell
// command: an "Add File" patch, which writes (or replaces) the file. Only
// content a patch says exactly goes that way (it must end in a newline and
// hold no carriage return); other content, and a client without
// apply_patch, gets the shell command. A string-replacing edit is never a
// patch: a patch hunk needs the file's lines around the change, and a
// stateless proxy does not have the file. ReverseItem reads an Add File
// apply_patch call of the history back through the mapping's FromPatch
// (WriteFromPatch).
//
// # Going back
//
// A command built from a non-shell native tool (read, write, edit, glob,
// grep: every mapping not marked Plain) starts with one comment line,
//
//	# harnessflow-bridge read {"filePath":"a.go","offset":10}
//
// holding the native tool and its arguments as compact JSON. Table.Reverse
// (and ReverseItem for history items) finds it in a later request's
// exec_command, shell or local_shell call and returns that native call,
// byte for byte the compacted arguments the model sent. A command without
// the comment (a native bash call, a harness's synthesized shell call)
// reverses to the table's Plain mapping through its FromCommand: the
// command line and workdir survive; the timeout, any cd or env this package
// wrote into the line, and native options like description do not. The
// comment is visible to the user in Codex's command display.
//
// # Output
//
// UnwrapOutput takes Codex's exec framing ("Chunk ID: …\nWall time: …\n
// Process exited with code N\nOriginal token count: …\nOutput:\n…") apart
// into the output and the exit code, for the harness to render its own
// observation; a still-running process has no exit code, and text not in
// the framing is returned unchanged with ok false.
package bridge
