package chatstream

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// view is a comparable, owned rendering of a Chunk, produced both from our
// decoder and from the encoding/json reference below.
type view struct {
	Kind     ChunkKind
	ID       *string
	Model    *string
	Choices  []choiceView
	HasUsage bool
	Usage    Usage
	ErrMsg   *string
	ErrType  *string
	ErrCode  *string
}

type choiceView struct {
	Index        int64
	Content      []string
	Refusal      *string
	Reasoning    *string
	Source       ReasoningSource
	Calls        []callView
	FinishReason *string
}

type callView struct {
	Index                int
	HasIndex             bool
	ID, Type, Name, Args *string
	ArgsJSON             bool
	Extra                *string
}

func sp(b []byte) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

func viewOf(c Chunk) view {
	v := view{Kind: c.Kind, ID: sp(c.ID), Model: sp(c.Model)}
	if c.Usage != nil {
		v.HasUsage, v.Usage = true, *c.Usage
	}
	if c.Error != nil {
		v.ErrMsg, v.ErrType, v.ErrCode = sp(c.Error.Message), sp(c.Error.Type), sp(c.Error.Code)
	}
	for _, ch := range c.Choices {
		cv := choiceView{Index: ch.Index, Refusal: sp(ch.Refusal), Reasoning: sp(ch.Reasoning), Source: ch.ReasoningSource, FinishReason: sp(ch.FinishReason)}
		for _, p := range ch.Content {
			cv.Content = append(cv.Content, string(p))
		}
		for _, t := range ch.ToolCalls {
			cv.Calls = append(cv.Calls, callView{Index: t.Index, HasIndex: t.HasIndex, ID: sp(t.ID), Type: sp(t.Type),
				Name: sp(t.Name), Args: sp(t.Arguments), ArgsJSON: t.ArgumentsJSON, Extra: sp(t.ExtraContent)})
		}
		v.Choices = append(v.Choices, cv)
	}
	return v
}

// refDecode decodes a chunk with encoding/json (into map[string]
// json.RawMessage at every level, which gives last-member-wins semantics and
// encoding/json's string unescaping) and applies the documented field rules.
// ok is false when encoding/json rejects the input or it is not an object.
func refDecode(data []byte, unary bool) (view, bool) {
	t := bytes.TrimLeft(data, " \t\r\n")
	if len(t) == 0 || t[0] != '{' {
		return view{}, false
	}
	top, ok := refObj(t)
	if !ok {
		return view{}, false
	}
	v := view{Kind: ChunkData}
	v.ID = refStr(top["id"])
	v.Model = refStr(top["model"])
	if arr, ok := refArr(top["choices"]); ok {
		for _, el := range arr {
			obj, ok := refObj(el)
			if !ok {
				continue
			}
			v.Choices = append(v.Choices, refChoice(obj, unary))
		}
	}
	if u, ok := refObj(top["usage"]); ok {
		v.HasUsage, v.Usage = true, refUsage(u)
	} else if g, ok := refObj(top["x_groq"]); ok {
		if u, ok := refObj(g["usage"]); ok {
			v.HasUsage, v.Usage = true, refUsage(u)
		}
	}
	if raw, ok := top["error"]; ok && string(raw) != "null" {
		v.Kind = ChunkError
		switch raw[0] {
		case '"':
			v.ErrMsg = refStr(raw)
		case '{':
			e, _ := refObj(raw)
			v.ErrMsg, v.ErrType = refStr(e["message"]), refStr(e["type"])
			if c := e["code"]; len(c) > 0 {
				switch {
				case c[0] == '"':
					v.ErrCode = refStr(c)
				case c[0] == '-' || c[0] >= '0' && c[0] <= '9':
					s := string(c)
					v.ErrCode = &s
				}
			}
		default:
			s := string(raw)
			v.ErrMsg = &s
		}
	}
	return v, true
}

func refChoice(obj map[string]json.RawMessage, unary bool) choiceView {
	var cv choiceView
	if n, ok := refInt(obj["index"]); ok {
		cv.Index = n
	}
	cv.FinishReason = refStr(obj["finish_reason"])
	key := "delta"
	if unary {
		key = "message"
	}
	d, ok := refObj(obj[key])
	if !ok {
		return cv
	}
	var think string
	if raw := d["content"]; len(raw) > 0 {
		switch raw[0] {
		case '"':
			cv.Content = append(cv.Content, *refStr(raw))
		case '{':
			o, _ := refObj(raw)
			if t := refStr(o["type"]); t != nil && *t == "thinking" {
				think += refThinking(o["thinking"])
			} else if s := refStr(o["text"]); s != nil {
				cv.Content = append(cv.Content, *s)
			}
		case '[':
			arr, _ := refArr(raw)
			for _, el := range arr {
				if o, ok := refObj(el); ok {
					if t := refStr(o["type"]); t != nil && *t == "thinking" {
						think += refThinking(o["thinking"])
						continue
					}
					if s := refStr(o["text"]); s != nil {
						cv.Content = append(cv.Content, *s)
					}
				}
			}
		}
	}
	cv.Refusal = refStr(d["refusal"])
	rc := refStr(d["reasoning_content"])
	var rf *string
	if raw := d["reasoning"]; len(raw) > 0 {
		switch raw[0] {
		case '"':
			rf = refStr(raw)
		case '{':
			o, _ := refObj(raw)
			rf = refTextMember(o, "text", "content")
		}
	}
	var rd string
	if arr, ok := refArr(d["reasoning_details"]); ok {
		for _, el := range arr {
			if o, ok := refObj(el); ok {
				if s := refTextMember(o, "text", "summary"); s != nil {
					rd += *s
				}
			}
		}
	}
	switch {
	case rc != nil && *rc != "":
		cv.Reasoning, cv.Source = rc, ReasoningContent
	case rf != nil && *rf != "":
		cv.Reasoning, cv.Source = rf, ReasoningField
	case rd != "":
		cv.Reasoning, cv.Source = &rd, ReasoningDetails
	case think != "":
		cv.Reasoning, cv.Source = &think, ReasoningThinkingParts
	}
	if arr, ok := refArr(d["tool_calls"]); ok {
		for _, el := range arr {
			o, ok := refObj(el)
			if !ok {
				continue
			}
			var c callView
			if n, ok := refInt(o["index"]); ok && n >= 0 && n <= maxIndex {
				c.Index, c.HasIndex = int(n), true
			}
			c.ID, c.Type = refStr(o["id"]), refStr(o["type"])
			if f, ok := refObj(o["function"]); ok {
				c.Name = refStr(f["name"])
				if raw := f["arguments"]; len(raw) > 0 {
					switch raw[0] {
					case '"':
						c.Args = refStr(raw)
					case '{', '[':
						var b bytes.Buffer
						_ = json.Compact(&b, raw)
						s := b.String()
						c.Args, c.ArgsJSON = &s, true
					}
				}
			}
			if raw := o["extra_content"]; len(raw) > 0 && string(raw) != "null" {
				s := string(raw)
				c.Extra = &s
			}
			cv.Calls = append(cv.Calls, c)
		}
	}
	return cv
}

// refThinking is the text of a thinking part's "thinking": a string, or
// the texts of an array's objects.
func refThinking(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	if raw[0] == '"' {
		if s := refStr(raw); s != nil {
			return *s
		}
		return ""
	}
	var out string
	arr, _ := refArr(raw)
	for _, el := range arr {
		if o, ok := refObj(el); ok {
			if s := refStr(o["text"]); s != nil {
				out += *s
			}
		}
	}
	return out
}

func refTextMember(o map[string]json.RawMessage, a, b string) *string {
	va, vb := refStr(o[a]), refStr(o[b])
	if (va == nil || *va == "") && vb != nil {
		return vb
	}
	return va
}

func refUsage(u map[string]json.RawMessage) Usage {
	var r Usage
	var hasPrompt, hasCompletion, hasReason bool
	r.PromptTokens, hasPrompt = refInt(u["prompt_tokens"])
	r.CompletionTokens, hasCompletion = refInt(u["completion_tokens"])
	r.TotalTokens, r.HasTotal = refInt(u["total_tokens"])
	top, hasTop := refInt(u["cached_tokens"])
	hit, hasHit := refInt(u["prompt_cache_hit_tokens"])
	var det int64
	var hasDet bool
	if o, ok := refObj(u["prompt_tokens_details"]); ok {
		det, hasDet = refInt(o["cached_tokens"])
	}
	if o, ok := refObj(u["completion_tokens_details"]); ok {
		r.ReasoningTokens, hasReason = refInt(o["reasoning_tokens"])
	}
	switch {
	case hasDet:
		r.CachedTokens = det
	case hasTop:
		r.CachedTokens = top
	case hasHit:
		r.CachedTokens = hit
	}
	r.Known = hasPrompt || hasCompletion || r.HasTotal || hasDet || hasTop || hasHit || hasReason
	return r
}

func refObj(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil, false
	}
	return m, true
}

func refArr(raw json.RawMessage) ([]json.RawMessage, bool) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var a []json.RawMessage
	if json.Unmarshal(raw, &a) != nil {
		return nil, false
	}
	return a, true
}

func refStr(raw json.RawMessage) *string {
	if len(raw) == 0 || raw[0] != '"' {
		return nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return &s
}

func refInt(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return 0, false
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}
