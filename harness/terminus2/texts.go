package terminus2

import (
	"fmt"
	"strings"

	"github.com/harnessflow/harnessflow/prompts"
)

// Marker names of prompts/pack/terminus-2/markers.json. The prompts that
// carry a marker render it from the same entry, so emitting and detecting
// share one phrase.
const (
	markerInitial       = "initial"        // starts the initial prompt
	markerSummary       = "summary"        // starts the summary request
	markerOriginalTask  = "original_task"  // labels the task inside the summary request
	markerQuestions     = "questions"      // starts the picking-up (questions) prompt
	markerAnswerRequest = "answer_request" // starts the request to answer the questions
	markerAnswers       = "answers"        // starts the handoff prompt with the answers
	markerParseError    = "parse_error"    // starts the parse-error prompt
	markerConfirm       = "confirm"        // the completion confirmation question
	markerHost          = "host"           // the host name of the terminal prompt root@HOST:DIR#
	markerPrevStart     = "previous_buffer_start"
	markerPrevEnd       = "previous_buffer_end"
	markerCurStart      = "current_buffer_start"
	markerCurEnd        = "current_buffer_end"
	markerScreenStart   = "current_screen_start"
	markerScreenEnd     = "current_screen_end"
	markerOutputNew     = "output_new"    // heads the output a batch printed
	markerOutputScreen  = "output_screen" // heads the screen when the batch printed nothing
)

var markerNames = [...]string{
	markerInitial, markerSummary, markerOriginalTask, markerQuestions, markerAnswerRequest, markerAnswers,
	markerParseError, markerConfirm, markerHost, markerPrevStart, markerPrevEnd, markerCurStart, markerCurEnd,
	markerScreenStart, markerScreenEnd, markerOutputNew, markerOutputScreen,
}

// Markers are the exact phrases by which a terminus-2 request and its
// observations can be told apart from outside the harness (the scripted
// model answers them so): the harness is their owner, reading them from its
// prompt pack.
type Markers struct {
	// Initial starts the first user message (marker "initial").
	Initial string
	// Keystrokes opens a command block of the XML variant, which its
	// initial prompt shows ([KeystrokesOpen]).
	Keystrokes string
	// OutputNew heads the observation of what a batch printed (marker
	// "output_new"); OutputScreen heads the screen when it printed nothing
	// (marker "output_screen").
	OutputNew, OutputScreen string
	// Confirm is the completion confirmation question (marker "confirm").
	Confirm string
}

// ReadMarkers returns the markers of pack (prompts.Default() when nil).
func ReadMarkers(pack *prompts.Pack) (Markers, error) {
	t, err := newTexts(pack, VariantJSON)
	if err != nil {
		return Markers{}, err
	}
	return Markers{Initial: t.marker(markerInitial), Keystrokes: KeystrokesOpen, OutputNew: t.marker(markerOutputNew),
		OutputScreen: t.marker(markerOutputScreen), Confirm: t.marker(markerConfirm)}, nil
}

// Template names of prompts/pack/terminus-2.
const (
	tmplInitial       = "initial"        // .Instruction .State
	tmplSummary       = "summary"        // .Instruction
	tmplQuestion      = "question"       // .Instruction .Summary .Screen
	tmplAnswerRequest = "answer_request" // .Questions
	tmplHandoff       = "handoff"        // .Answers
	tmplParseError    = "parse_error"    // .Error .Warning
	tmplConfirm       = "confirm"        // .State
	tmplWarnings      = "warnings"       // .Warning .Output
	tmplOutputNew     = "output_new"     // .Output
	tmplOutputScreen  = "output_screen"  // .Screen
	tmplOutputLimit   = "output_limit"   // .Warning
)

// texts are the prompt texts and markers of one turn.
type texts struct {
	pack    *prompts.Pack
	m       map[string]string
	variant Variant
}

// newTexts reads the markers of the pack and checks that every template
// the harness renders is there.
func newTexts(pack *prompts.Pack, v Variant) (*texts, error) {
	if pack == nil {
		pack = prompts.Default()
	}
	t := &texts{pack: pack, m: map[string]string{}, variant: v}
	for _, name := range markerNames {
		s, err := pack.Marker(Name, name)
		if err != nil {
			return nil, fmt.Errorf("terminus-2: %w", err)
		}
		t.m[name] = s
	}
	for _, name := range []string{tmplInitial, tmplSummary, tmplQuestion, tmplAnswerRequest, tmplHandoff,
		tmplParseError, tmplConfirm, tmplWarnings, tmplOutputNew, tmplOutputScreen, tmplOutputLimit} {
		if n := t.name(name); !pack.Has(Name, n) {
			return nil, fmt.Errorf("terminus-2: the prompt pack has no template %s/%s", Name, n)
		}
	}
	return t, nil
}

// name is the template of a text for the turn's variant: the XML variant
// has its own initial, parse-error and confirmation prompts.
func (t *texts) name(base string) string {
	if t.variant == VariantXML {
		switch base {
		case tmplInitial, tmplParseError, tmplConfirm:
			return base + "_xml"
		}
	}
	return base
}

// render renders a template with data and the markers (as .M).
func (t *texts) render(base string, data map[string]any) (string, error) {
	if data == nil {
		data = map[string]any{}
	}
	data["M"] = t.m
	s, err := t.pack.Render(Name, t.name(base), data)
	if err != nil {
		return "", fmt.Errorf("terminus-2: %w", err)
	}
	return s, nil
}

// marker returns the phrase of a marker.
func (t *texts) marker(name string) string { return t.m[name] }

// starts reports whether text begins with the phrase of marker name.
func (t *texts) starts(text, name string) bool { return strings.HasPrefix(text, t.m[name]) }

// promptPrefix is "root@HOST:", the start of the terminal prompt line.
func (t *texts) promptPrefix() string { return "root@" + t.m[markerHost] + ":" }

// initialState is what the terminal shows before the first command: the
// prompt in dir, then the blank rest of the screen.
func (t *texts) initialState(dir string) string {
	return t.promptPrefix() + dir + "#" + strings.Repeat("\n", 41)
}
