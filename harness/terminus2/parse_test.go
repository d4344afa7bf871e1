package terminus2

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

// sameResult compares what the parser decided (not analysis and plan).
func sameResult(a, b Result) bool {
	return a.Error == b.Error && a.TaskComplete == b.TaskComplete && slices.Equal(a.Commands, b.Commands) &&
		slices.Equal(a.Warnings, b.Warnings)
}

// The JSON parser against the rules of the original terminus-2 parser;
// the decoder messages are CPython's json module (3.12) verbatim.
var jsonCases = []struct {
	name, in string
	want     Result
}{
	{"plain", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls -la\\n\",\"duration\":0.1}],\"task_complete\":false}", Result{Commands: []Command{{"ls -la\n", 0.1}}, TaskComplete: false, Warnings: nil}},
	{"prose around", "Sure, here it is:\n{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls\\n\",\"duration\":0.1}]}\nHope that helps.", Result{Commands: []Command{{"ls\n", 0.1}}, TaskComplete: false, Warnings: []string{"Extra text detected before JSON object", "Extra text detected after JSON object"}}},
	{"markdown fence", "```json\n{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[]}\n```", Result{Commands: nil, TaskComplete: false, Warnings: []string{"Extra text detected before JSON object", "Extra text detected after JSON object"}}},
	{"two objects", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"one\\n\",\"duration\":1}]}\n{\"analysis\":\"b\",\"plan\":\"q\",\"commands\":[{\"keystrokes\":\"two\\n\",\"duration\":1}]}", Result{Commands: []Command{{"one\n", 1.0}}, TaskComplete: false, Warnings: []string{"Extra text detected after JSON object"}}},
	{"enclosing array", "[{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[]}]", Result{Commands: nil, TaskComplete: false, Warnings: []string{"Extra text detected before JSON object", "Extra text detected after JSON object"}}},
	{"no json", "I will run ls now.", Result{Error: "No valid JSON found in response", Warnings: []string{"No valid JSON object found"}}},
	{"missing keystrokes", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"duration\":1}]}", Result{Error: "Command 1 missing required 'keystrokes' field", Warnings: nil}},
	{"missing all fields", "{\"foo\":1}", Result{Error: "Missing required fields: analysis, plan, commands", Warnings: nil}},
	{"missing plan and commands", "{\"analysis\":\"a\"}", Result{Error: "Missing required fields: plan, commands", Warnings: nil}},
	{"null fields present", "{\"analysis\":null,\"plan\":\"p\",\"commands\":[]}", Result{Commands: nil, TaskComplete: false, Warnings: []string{"Field 'analysis' should be a string"}}},
	{"commands not a list", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":\"ls\"}", Result{Error: "Field 'commands' must be an array", Warnings: nil}},
	{"commands null", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":null}", Result{Error: "Field 'commands' must be an array", Warnings: nil}},
	{"command not object", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[\"ls\\n\"]}", Result{Error: "Command 1 must be an object", Warnings: nil}},
	{"keystrokes not string", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":[\"l\",\"s\"],\"duration\":1}]}", Result{Error: "Command 1 'keystrokes' must be a string", Warnings: nil}},
	{"bad duration string", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls\\n\",\"duration\":\"fast\"}]}", Result{Commands: []Command{{"ls\n", 1.0}}, TaskComplete: false, Warnings: []string{"Command 1: Invalid duration value, using default 1.0"}}},
	{"duration missing", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls\\n\"}]}", Result{Commands: []Command{{"ls\n", 1.0}}, TaskComplete: false, Warnings: []string{"Command 1: Missing duration field, using default 1.0"}}},
	{"duration true", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls\\n\",\"duration\":true}]}", Result{Commands: []Command{{"ls\n", 1.0}}, TaskComplete: false, Warnings: nil}},
	{"duration over 60", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"make\\n\",\"duration\":600}]}", Result{Commands: []Command{{"make\n", 60.0}}, TaskComplete: false, Warnings: nil}},
	{"duration negative", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls\\n\",\"duration\":-3}]}", Result{Commands: []Command{{"ls\n", 0.0}}, TaskComplete: false, Warnings: nil}},
	{"duration NaN", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls\\n\",\"duration\":NaN}]}", Result{Commands: []Command{{"ls\n", 1.0}}, TaskComplete: false, Warnings: nil}},
	{"duration Infinity", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls\\n\",\"duration\":Infinity}]}", Result{Commands: []Command{{"ls\n", 60.0}}, TaskComplete: false, Warnings: nil}},
	{"unknown command fields", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls\\n\",\"duration\":1,\"wait\":true,\"note\":\"x\"}]}", Result{Commands: []Command{{"ls\n", 1.0}}, TaskComplete: false, Warnings: []string{"Command 1: Unknown fields: wait, note"}}},
	{"missing newline between commands", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"cd /tmp\",\"duration\":0.1},{\"keystrokes\":\"ls\\n\",\"duration\":0.1}]}", Result{Commands: []Command{{"cd /tmp", 0.1}, {"ls\n", 0.1}}, TaskComplete: false, Warnings: []string{"Command 1 should end with newline when followed by another command. Without one, its keystrokes and the next command's end up on the same line."}}},
	{"wrong field order", "{\"commands\":[],\"plan\":\"p\",\"analysis\":\"a\"}", Result{Commands: nil, TaskComplete: false, Warnings: []string{"Fields appear in wrong order. Found: commands → plan → analysis, expected: analysis → plan → commands"}}},
	{"task_complete string yes", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[],\"task_complete\":\"YES\"}", Result{Commands: nil, TaskComplete: true, Warnings: nil}},
	{"task_complete string no", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[],\"task_complete\":\"no\"}", Result{Commands: nil, TaskComplete: false, Warnings: nil}},
	{"task_complete number", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[],\"task_complete\":1}", Result{Commands: nil, TaskComplete: true, Warnings: []string{"Field 'task_complete' should be a boolean or a string"}}},
	{"task_complete empty list", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[],\"task_complete\":[]}", Result{Commands: nil, TaskComplete: false, Warnings: []string{"Field 'task_complete' should be a boolean or a string"}}},
	{"complete with bad command", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"duration\":1}],\"task_complete\":true}", Result{Commands: nil, TaskComplete: true, Warnings: []string{"Command 1 missing required 'keystrokes' field"}}},
	{"non-string analysis", "{\"analysis\":{\"k\":1},\"plan\":7,\"commands\":[]}", Result{Commands: nil, TaskComplete: false, Warnings: []string{"Field 'analysis' should be a string", "Field 'plan' should be a string"}}},
	{"unicode keystrokes", "{\"analysis\":\"é\",\"plan\":\"日本\",\"commands\":[{\"keystrokes\":\"echo \\u00e9 日本 😀\\n\",\"duration\":0.1}]}", Result{Commands: []Command{{"echo é 日本 😀\n", 0.1}}, TaskComplete: false, Warnings: nil}},
	{"crlf", "{\r\n  \"analysis\": \"a\",\r\n  \"plan\": \"p\",\r\n  \"commands\": [{\"keystrokes\": \"ls\\r\\n\", \"duration\": 0.1}]\r\n}\r\n", Result{Commands: []Command{{"ls\r\n", 0.1}}, TaskComplete: false, Warnings: nil}},
	{"raw newline in string", "{\"analysis\":\"line one\nline two\",\"plan\":\"p\",\"commands\":[]}", Result{Error: "Invalid JSON: Invalid control character at: line 1 column 22 (char 21) | Content: '{\"analysis\":\"line one\\nline two\",\"plan\":\"p\",\"commands\":[]}'", Warnings: nil}},
	{"trailing comma", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[],}", Result{Error: "Invalid JSON: Expecting property name enclosed in double quotes: line 1 column 42 (char 41) | Content: '{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[],}'", Warnings: nil}},
	{"single quotes", "{'analysis':'a','plan':'p','commands':[]}", Result{Error: "Invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1) | Content: \"{'analysis':'a','plan':'p','commands':[]}\"", Warnings: nil}},
	{"truncated before closing brace", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls\\n\",\"duration\":0.1}]", Result{Commands: []Command{{"ls\n", 0.1}}, TaskComplete: false, Warnings: []string{"AUTO-CORRECTED: Fixed incomplete JSON by adding missing closing brace - please fix this in future responses"}}},
	{"truncated inside commands", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls\\n\",\"duration\":0.1}", Result{Error: "No valid JSON found in response", Warnings: []string{"No valid JSON object found"}}},
	{"truncated inside string", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"ls", Result{Error: "No valid JSON found in response", Warnings: []string{"No valid JSON object found"}}},
	{"mixed content rescue", "Plan {\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[]} and then {\"oops\": }", Result{Commands: nil, TaskComplete: false, Warnings: []string{"Extra text detected before JSON object", "Extra text detected after JSON object"}}},
	{"braces in strings", "{\"analysis\":\"uses {braces} and \\\"quotes\\\"\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"echo '}'\\n\",\"duration\":0.1}]}", Result{Commands: []Command{{"echo '}'\n", 0.1}}, TaskComplete: false, Warnings: nil}},
	{"control keys", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"C-c\",\"duration\":0.1},{\"keystrokes\":\"C-d\",\"duration\":0.1}]}", Result{Commands: []Command{{"C-c", 0.1}, {"C-d", 0.1}}, TaskComplete: false, Warnings: []string{"Command 1 should end with newline when followed by another command. Without one, its keystrokes and the next command's end up on the same line."}}},
	{"empty keystrokes wait", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"\",\"duration\":10}]}", Result{Commands: []Command{{"", 10.0}}, TaskComplete: false, Warnings: nil}},
	{"stray backslash before object", "\\{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[]}", Result{Commands: nil, TaskComplete: false, Warnings: []string{"AUTO-CORRECTED: Extracted JSON from mixed content - please fix this in future responses"}}},
	{"stray closing brace first", "} {\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[]}", Result{Commands: nil, TaskComplete: false, Warnings: []string{"AUTO-CORRECTED: Extracted JSON from mixed content - please fix this in future responses"}}},
	{"not an object after extraction", "{}", Result{Error: "Missing required fields: analysis, plan, commands", Warnings: nil}},
	{"duplicate keys", "{\"analysis\":\"a\",\"plan\":\"p\",\"commands\":[{\"keystrokes\":\"one\\n\"}],\"commands\":[]}", Result{Commands: nil, TaskComplete: false, Warnings: nil}},
}

func TestParseJSON(t *testing.T) {
	if len(jsonCases) < 30 {
		t.Fatalf("only %d cases", len(jsonCases))
	}
	for _, c := range jsonCases {
		t.Run(c.name, func(t *testing.T) {
			got := ParseJSON(c.in)
			if !sameResult(got, c.want) {
				t.Errorf("ParseJSON(%q)\n got %#v\nwant %#v", c.in, got, c.want)
			}
		})
	}
}

// The JSON that `harnessflow parse` prints, and analysis and plan.
func TestResultJSON(t *testing.T) {
	r := ParseJSON(`{"analysis":"look","plan":"list","commands":[{"keystrokes":"ls\n","duration":0.1}]}`)
	if r.Analysis != "look" || r.Plan != "list" {
		t.Errorf("analysis %q, plan %q", r.Analysis, r.Plan)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"commands":[{"keystrokes":"ls\n","duration":0.1}],"task_complete":false,"warnings":[]}`; string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(ParseJSON("no json here"))
	if want := `{"error":"No valid JSON found in response","warnings":["No valid JSON object found"]}`; string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	if got := (&Result{Warnings: []string{"a", "b"}}).Warning(); got != "- a\n- b" {
		t.Errorf("Warning() = %q", got)
	}
}

// A reply that is long and cut short keeps its content preview at 100
// code points.
func TestParseJSONPreview(t *testing.T) {
	in := `{"analysis":"` + strings.Repeat("é", 250) + `","plan":"p" "commands":[]}`
	got := ParseJSON(in)
	want := "Invalid JSON: Expecting ',' delimiter: line 1 column 277 (char 276) | Content preview: '{\"analysis\":\"" +
		strings.Repeat("é", 87) + "'..."
	if got.Error != want {
		t.Errorf("error\n got %q\nwant %q", got.Error, want)
	}
}

// resp wraps sections in a <response> block.
func resp(body string) string { return "<response>\n" + body + "\n</response>" }

const (
	xmlAP   = "<analysis>a</analysis>\n<plan>p</plan>\n"
	xmlLS   = "<commands>\n<keystrokes duration=\"0.1\">ls -la\n</keystrokes>\n</commands>"
	xmlDone = "\n<task_complete>true</task_complete>"
)

var xmlCases = []struct {
	name, in string
	want     Result
}{
	{"plain", resp(xmlAP + xmlLS), Result{Commands: []Command{{"ls -la\n", 0.1}}}},
	{"no response tag", xmlAP + xmlLS, Result{Error: "No <response> tag found"}},
	{"empty response", "<response></response>", Result{Error: "No <response> tag found"}},
	{"missing closing tag is silent", "<response>\n" + xmlAP + xmlLS, Result{Commands: []Command{{"ls -la\n", 0.1}}}},
	{"text around", "Here you go:\n" + resp(xmlAP+xmlLS) + "\nThanks", Result{Commands: []Command{{"ls -la\n", 0.1}},
		Warnings: []string{"Extra text detected before <response> tag", "Extra text detected after </response> tag"}}},
	{"two responses", resp(xmlAP+xmlLS) + "\n" + resp(xmlAP+"<commands><keystrokes duration=\"1\">rm -rf x\n</keystrokes></commands>"),
		Result{Commands: []Command{{"ls -la\n", 0.1}}, Warnings: []string{"Extra text detected after </response> tag",
			"IMPORTANT: Only issue one <response> block at a time. You issued 2 and only the first was executed."}}},
	{"two responses without text after", "<response>\n" + xmlAP + xmlLS + "\n<response>",
		Result{Commands: []Command{{"ls -la\n", 0.1}}}},
	{"empty commands", resp(xmlAP + "<commands>\n</commands>"), Result{Warnings: []string{"Commands section is empty; not taking any action." +
		" To wait, send <keystrokes duration=\"10\"></keystrokes>; to let a command finish, wait again."}}},
	{"self-closing commands", resp(xmlAP + "<commands/>"), Result{Warnings: []string{"Commands section is empty; not taking any action." +
		" To wait, send <keystrokes duration=\"10\"></keystrokes>; to let a command finish, wait again."}}},
	{"empty commands complete", resp(xmlAP + "<commands></commands>" + xmlDone), Result{TaskComplete: true}},
	{"missing commands", resp(xmlAP), Result{Error: "Missing <commands> section"}},
	{"missing commands complete", resp(xmlAP + "<task_complete>true</task_complete>"), Result{TaskComplete: true}},
	{"task complete spaced, any case", resp(xmlAP + xmlLS + "\n<task_complete>\n  TRUE \n</task_complete>"),
		Result{Commands: []Command{{"ls -la\n", 0.1}}, TaskComplete: true}},
	{"task complete yes is not true", resp(xmlAP + xmlLS + "\n<task_complete>yes</task_complete>"),
		Result{Commands: []Command{{"ls -la\n", 0.1}}}},
	{"unquoted duration", resp(xmlAP + "<commands><keystrokes duration=5>ls\n</keystrokes></commands>"), Result{Commands: []Command{{"ls\n", 1}},
		Warnings: []string{"Command 1: the duration attribute should be quoted, e.g. duration=\"1.0\"", "Command 1: Missing duration attribute, using default 1.0"}}},
	{"single-quoted duration", resp(xmlAP + "<commands><keystrokes duration='2.5'>ls\n</keystrokes></commands>"), Result{Commands: []Command{{"ls\n", 2.5}},
		Warnings: []string{"Command 1: write the duration in double quotes, e.g. duration=\"1.0\""}}},
	{"missing duration", resp(xmlAP + "<commands><keystrokes>ls\n</keystrokes></commands>"), Result{Commands: []Command{{"ls\n", 1}},
		Warnings: []string{"Command 1: Missing duration attribute, using default 1.0"}}},
	{"bad duration", resp(xmlAP + "<commands><keystrokes duration=\"soon\">ls\n</keystrokes></commands>"), Result{Commands: []Command{{"ls\n", 1}},
		Warnings: []string{"Command 1: Invalid duration value 'soon', using default 1.0"}}},
	{"duration over 60 and python float forms", resp(xmlAP + "<commands><keystrokes duration=\" 1_20 \">make\n</keystrokes>" +
		"<keystrokes duration=\"-inf\">x\n</keystrokes><keystrokes duration=\"nan\">y\n</keystrokes></commands>"),
		Result{Commands: []Command{{"make\n", 60}, {"x\n", 0}, {"y\n", 1}}}},
	{"unknown attribute", resp(xmlAP + "<commands><keystrokes duration=\"1\" block=\"true\">ls\n</keystrokes></commands>"),
		Result{Commands: []Command{{"ls\n", 1}}, Warnings: []string{"Command 1: Unknown attributes: block (only duration is read)"}}},
	{"entities are not decoded", resp(xmlAP + "<commands><keystrokes duration=\"1\">echo a &amp;&amp; cat &lt;f\n</keystrokes></commands>"),
		Result{Commands: []Command{{"echo a &amp;&amp; cat &lt;f\n", 1}}, Warnings: []string{
			"&lt; is typed as those 4 characters, not as <: write the character itself unless you mean the entity",
			"&amp; is typed as those 5 characters, not as &: write the character itself unless you mean the entity"}}},
	{"literal backslash r backslash n", resp(xmlAP + `<commands><keystrokes duration="1">ls\r\n</keystrokes></commands>`),
		Result{Commands: []Command{{`ls\r\n`, 1}}, Warnings: []string{`the text \r\n is typed literally; end a line with a real newline instead`}}},
	{"missing newline between commands", resp(xmlAP + "<commands><keystrokes duration=\"0.1\">cd /tmp</keystrokes><keystrokes duration=\"0.1\">ls\n</keystrokes></commands>"),
		Result{Commands: []Command{{"cd /tmp", 0.1}, {"ls\n", 0.1}}, Warnings: []string{"Command 1 should end with newline when followed by another command." +
			" Without one, its keystrokes and the next command's end up on the same line."}}},
	{"missing analysis and plan", resp(xmlLS), Result{Commands: []Command{{"ls -la\n", 0.1}},
		Warnings: []string{"Missing <analysis> section", "Missing <plan> section"}}},
	{"unknown tag", resp(xmlAP + "<thoughts>hm</thoughts>\n" + xmlLS), Result{Commands: []Command{{"ls -la\n", 0.1}},
		Warnings: []string{"Unknown tag <thoughts> outside the known sections; only <analysis>, <plan>, <commands> and <task_complete> are read"}}},
	{"tags inside sections are fine", resp("<analysis>the <b>file</b></analysis>\n<plan>p</plan>\n" + xmlLS), Result{Commands: []Command{{"ls -la\n", 0.1}}}},
	{"two commands blocks", resp(xmlAP + xmlLS + "\n<commands><keystrokes duration=\"1\">pwd\n</keystrokes></commands>"),
		Result{Commands: []Command{{"ls -la\n", 0.1}}, Warnings: []string{"IMPORTANT: Only issue one <commands> block at a time. You issued 2 and only the first was executed."}}},
	{"wrong order", resp(xmlLS + "\n<plan>p</plan>\n<analysis>a</analysis>"), Result{Commands: []Command{{"ls -la\n", 0.1}},
		Warnings: []string{"Sections appear in wrong order. Found: commands → plan → analysis, expected: analysis → plan → commands"}}},
	{"control keys", resp(xmlAP + "<commands><keystrokes duration=\"0.1\">C-c</keystrokes>\n<keystrokes duration=\"0.1\">C-d</keystrokes></commands>"),
		Result{Commands: []Command{{"C-c", 0.1}, {"C-d", 0.1}}, Warnings: []string{"Command 1 should end with newline when followed by another command." +
			" Without one, its keystrokes and the next command's end up on the same line."}}},
	{"unicode", resp("<analysis>é</analysis><plan>日本</plan><commands><keystrokes duration=\"0.1\">echo 😀\n</keystrokes></commands>"),
		Result{Commands: []Command{{"echo 😀\n", 0.1}}}},
	{"crlf", "<response>\r\n<analysis>a</analysis>\r\n<plan>p</plan>\r\n<commands>\r\n<keystrokes duration=\"0.1\">ls\r\n</keystrokes>\r\n</commands>\r\n</response>\r\n",
		Result{Commands: []Command{{"ls\r\n", 0.1}}}},
	{"truncated keystrokes", "<response>\n" + xmlAP + "<commands>\n<keystrokes duration=\"0.1\">ls -la", Result{Error: "Missing <commands> section",
		Warnings: []string{"Unknown tag <keystrokes> outside the known sections; only <analysis>, <plan>, <commands> and <task_complete> are read"}}},
}

func TestParseXML(t *testing.T) {
	if len(xmlCases) < 30 {
		t.Fatalf("only %d cases", len(xmlCases))
	}
	for _, c := range xmlCases {
		t.Run(c.name, func(t *testing.T) {
			got := ParseXML(c.in)
			if !sameResult(got, c.want) {
				t.Errorf("ParseXML(%q)\n got %#v\nwant %#v", c.in, got, c.want)
			}
		})
	}
}

func TestParseVariant(t *testing.T) {
	for in, want := range map[string]Variant{"": VariantJSON, "json": VariantJSON, " XML ": VariantXML} {
		if got, err := ParseVariant(in); err != nil || got != want {
			t.Errorf("ParseVariant(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseVariant("yaml"); err == nil {
		t.Error("ParseVariant(yaml) succeeded")
	}
	out, err := parseReply(resp(xmlAP+xmlLS), "xml")
	if r, ok := out.(Result); err != nil || !ok || len(r.Commands) != 1 {
		t.Errorf("parseReply xml = %#v, %v", out, err)
	}
	if _, err := parseReply("{}", "toml"); err == nil {
		t.Error("parseReply with an unknown variant succeeded")
	}
}

// A reply cut short after its commands is used when the part up to the
// </response> after </commands> parses cleanly.
func TestSalvage(t *testing.T) {
	cut := resp(xmlAP+xmlLS) + "\n<response><analysis>more"
	r, ok := salvage(cut, VariantXML)
	if !ok || len(r.Commands) != 1 {
		t.Errorf("salvage = %#v, %v", r, ok)
	}
	if _, ok := salvage("<response>"+xmlAP+"<commands><keystrokes>ls", VariantXML); ok {
		t.Error("salvaged a reply without </commands>")
	}
	if _, ok := salvage(resp(xmlAP+xmlLS), VariantJSON); ok {
		t.Error("salvaged in the JSON variant")
	}
	twice := resp(xmlAP+xmlDone) + "\n" + resp(xmlAP+xmlLS) + "<analysis>cut"
	if _, ok := salvage(twice, VariantXML); ok {
		t.Error("salvaged a reply with two blocks")
	}
}

func TestEffectiveDuration(t *testing.T) {
	for in, want := range map[float64]float64{-1: 0, 0: 0, 0.5: 0.5, 60: 60, 61: 60, math.Inf(1): 60, math.Inf(-1): 0} {
		if got := effectiveDuration(in); got != want {
			t.Errorf("effectiveDuration(%v) = %v, want %v", in, got, want)
		}
	}
	if got := effectiveDuration(math.NaN()); got != DefaultDuration {
		t.Errorf("effectiveDuration(NaN) = %v", got)
	}
}
