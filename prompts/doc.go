// Package prompts is harnessflow's prompt pack: every text a harness sends to
// a model (system prompts, reminders, tool descriptions, …) lives here rather
// than in Go string literals, so that it can be read, reviewed and replaced in
// one place.
//
// # Layout
//
// The pack is embedded in the binary from the pack/ directory beside this
// file:
//
//	pack/<harness>/<name>.tmpl   a template, addressed as (harness, name)
//	pack/<harness>/markers.json  optional marker phrases of that harness
//	pack/<harness>/<name>.json   optional data files of that harness (see Data)
//
// For example pack/minimal/system.tmpl is the system prompt of the "minimal"
// harness, fetched with Default().Render("minimal", "system", nil). Nothing
// else belongs in pack/: no READMEs, no notes, no nested directories; the
// conventions are written here instead.
//
// # Templates
//
// A .tmpl file is a Go text/template (see package text/template) parsed with
// the option missingkey=error, so rendering with a map that lacks a key the
// template uses fails instead of printing "<no value>". No extra functions
// are defined beyond the text/template builtins. The text is used byte for
// byte, including a final newline if the file has one; use trim markers
// ({{- and -}}) where whitespace matters. Each file is its own template; a
// template cannot call templates of other files.
//
// # Markers
//
// markers.json is a flat JSON object mapping a marker name to an exact
// phrase, e.g. {"plan-done": "Plan complete."}. Markers are the phrases that
// detector code must match exactly (a sentinel the prompt asks the model to
// print, a heading the harness later looks for). They live beside the prompts
// that emit them so that changing a prompt and its detector is one edit in one
// directory: code asks Pack.Marker for the phrase and never spells it itself.
// Every value must be a non-empty string.
//
// # Data files
//
// A <name>.json file other than markers.json is a data file: structured
// data that goes with the prompts, such as a harness's fixed tool list with
// descriptions in our wording (pack/zcode/tools.json). Pack.Data(harness,
// "tools.json") returns its bytes as they are; each must be valid JSON, and
// what the JSON means is up to the harness that reads it.
//
// # Overlays
//
// Load(dir) starts from the embedded pack and overlays a directory with the
// same layout:
//
//   - dir/<harness>/<name>.tmpl replaces the embedded template of the same
//     path, or adds a new one (a new name or a whole new harness);
//   - dir/<harness>/markers.json merges over the embedded markers of that
//     harness key by key: keys it names are replaced or added, the others are
//     kept;
//   - dir/<harness>/<name>.json replaces (or adds) the data file of the same
//     path, whole;
//   - any other file, and any entry whose name starts with ".", is ignored.
//
// Every template of the result must parse, every markers.json must be a
// JSON object of strings and every data file valid JSON; otherwise Load fails
// with an error naming the file.
// Pack.Source tells whether a template came from the embedded pack or from
// which overlay file.
//
// # Wording
//
// Every text in the pack is the project's own wording, written for
// harnessflow. Harnesses emulate the behavior of other agents, but their
// prompts are not copied from those projects; a user who wants another
// project's exact text can put it in an overlay directory.
package prompts
