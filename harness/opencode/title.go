package opencode

import (
	"encoding/json"
	"strings"

	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire/chat"
)

// FirstTurn reports whether the request is the first turn of its
// conversation: every input item is a user or developer message (no
// assistant message, call or output yet). It looks at nothing but the
// request, so any number of proxies decide alike.
func FirstTurn(req *protocol.ResponsesRequest) bool {
	for _, it := range req.Input {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil || (m.Role != protocol.RoleUser && m.Role != protocol.RoleDeveloper) {
			return false
		}
	}
	return true
}

// FirstUserText is the text of the first user message that is not the
// engine's context (its text parts concatenated), "" when there is none.
func FirstUserText(req *protocol.ResponsesRequest) string {
	for _, it := range req.Input {
		m, ok := it.(*protocol.Message)
		if !ok || m == nil || m.Role != protocol.RoleUser || request.IsContextualUser(m) {
			continue
		}
		var b strings.Builder
		for _, c := range m.Content {
			if c.Type == protocol.ContentInputText || c.Type == protocol.ContentOutputText {
				b.WriteString(c.Text)
			}
		}
		return b.String()
	}
	return ""
}

// TitleRequest returns the body of the title request of a first turn (see
// the package doc), with the provider quirks of the upstream applied.
func TitleRequest(env *harness.Env) (json.RawMessage, error) {
	system, err := env.Prompts.Render(harness.NameOpenCode, "title", nil)
	if err != nil {
		return nil, err
	}
	lead, err := env.Prompts.Render(harness.NameOpenCode, "title_lead", nil)
	if err != nil {
		return nil, err
	}
	if fork(env) {
		// The fork trims the title prompt; opencode 1.18 sends it with
		// its final newline.
		system = strings.TrimRight(system, "\n")
	}
	body := chat.Request{
		Model: env.Request.Model,
		Messages: []chat.Message{
			{Role: request.RoleSystem, Content: chat.Text(system)},
			{Role: request.RoleUser, Content: chat.Text(lead)},
			{Role: request.RoleUser, Content: chat.Text(QuoteText(FirstUserText(env.Request)))},
		},
		Stream:        ptr(true),
		StreamOptions: []byte(`{"include_usage":true}`),
		MaxTokens:     ptr(int64(MaxTokens)),
	}
	if fork(env) {
		body.Extra = chat.Extra{"temperature": json.RawMessage("1")}
	}
	request.ApplyProviderQuirks(request.DetectProvider(env.BaseURL), &body)
	data, err := body.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	return data, nil
}
