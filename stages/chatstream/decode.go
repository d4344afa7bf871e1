package chatstream

import (
	"context"
	"fmt"

	"github.com/harnessflow/harnessflow/internal/jsonx"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/stages/sse"
)

// chunkDecoder parses chat chunks into Chunk values without reflection and,
// in steady state, without allocating: its pools of choices, tool calls and
// content parts, and the scanner's scratch buffer, are reused for every
// chunk, so a Chunk is valid only until the next decode.
//
// Field rules (the differential test pins them against encoding/json):
//   - only the fields listed on Chunk are read; all other members are
//     validated and skipped, however deeply nested;
//   - a member given twice takes its last value (as encoding/json does for a
//     map), a nested object given twice is replaced, not merged;
//   - null, and a value of another JSON type than expected (a number where a
//     string is expected, a string where an object is expected ...), count as
//     absent. encoding/json would report an UnmarshalTypeError for such a
//     field of a typed struct; here the field is simply ignored, because one
//     odd field of a provider must not kill a stream;
//   - an integer field holding a fraction, an exponent or a number outside
//     int64 is absent, as strconv.ParseInt would reject it;
//   - strings are unescaped exactly as encoding/json does, including U+FFFD
//     for lone surrogates and for invalid UTF-8 bytes;
//   - any syntax error anywhere in the event fails the chunk.
type chunkDecoder struct {
	s      jsonx.Scanner
	unary  bool // read choices[].message instead of choices[].delta
	chunk  Chunk
	usageV Usage // what chunk.Usage points to
	// groqV is the last x_groq member's usage object, when hasGroq; it is
	// the chunk's usage when the chunk has no top-level usage object.
	groqV   Usage
	hasGroq bool
	errV    ErrorObject // what chunk.Error points to
	choice  []Choice
	spans   []span
	parts   [][]byte
	calls   []ToolCall
	tmp     [][]byte // reasoning_details texts of the delta being read
	think   [][]byte // texts of the delta's thinking content parts (Mistral)

	// Prefix resume (see prefixSnap). track is the snapshot being built
	// during a parse; snap is the last one taken.
	track prefixTrack
	snap  prefixSnap

	// Suffix skip: most chunks also end alike (`,"logprobs":null,
	// "finish_reason":null}],"usage":null}`). When the rest of a resumed
	// chunk after its delta value equals sfx — the rest of an earlier such
	// chunk whose parse had no effect on the result (only skipped members,
	// null finish_reason/usage/error, closing brackets) — parsing stops
	// there, with the same result a full parse would give.
	sfx     jsonx.Suffix
	sfxOn   bool // this parse is recording a suffix from sfxAt
	sfxPure bool // nothing since sfxAt had an effect
	sfxAt   int
	done    bool // the suffix matched: the chunk is complete
}

// prefixSnap remembers how the previous chunk began. Chunks of one stream
// usually share their first ~200 bytes byte for byte ({"id":...,"object":
// ...,"created":...,"model":...,"system_fingerprint":...,"choices":[{"index":
// 0,"delta":), and parsing is a pure function of the bytes read, so when a
// chunk starts with exactly the bytes of the snapshot the decoder restores
// the state it had after them (id, model, choice index; the scanner's
// position and nesting come from the jsonx.Prefix) and resumes parsing at
// the delta value instead of scanning the prefix again. A snapshot is only
// taken for plain prefixes: no string in it needed unescaping, and it holds
// nothing but the top-level id, model and skipped members, the first
// choice's index and skipped members, and the "delta" key of that first
// choice.
type prefixSnap struct {
	prefix       jsonx.Prefix // the bytes up to and including the ':' after "delta"
	idOff, idLen int          // id within the prefix; idOff < 0 when absent
	mOff, mLen   int          // model within the prefix; mOff < 0 when absent
	index        int64        // the first choice's index
}

// maxSnapBytes bounds the prefix and suffix snapshots: the common ones are
// about 200 and 50 bytes; long ones (a logprobs member, say) differ from
// chunk to chunk anyway, and copying them for nothing would cost time.
const maxSnapBytes = 1024

// snapDepth is the nesting at the first choice's delta value: the chunk
// object, the choices array and the choice object.
const snapDepth = 3

// prefixTrack follows a parse from the start to the first choice's delta,
// recording what a snapshot needs and whether the prefix qualifies.
type prefixTrack struct {
	ok           bool // nothing seen so far disqualifies the prefix
	idOff, idLen int
	mOff, mLen   int
	index        int64
}

// span locates a choice's content parts and tool calls in the pools while
// the chunk is being read (the pools may grow and move).
type span struct{ p0, p1, c0, c1 int }

// decode parses one chunk into the decoder's own Chunk (valid until the
// next decode). A syntax error is a *jsonx.SyntaxError naming the offset in
// data where it was found.
func (d *chunkDecoder) decode(data []byte) (*Chunk, error) {
	s := &d.s
	d.choice, d.spans, d.parts, d.calls = d.choice[:0], d.spans[:0], d.parts[:0], d.calls[:0]
	d.chunk = Chunk{}
	d.sfxOn, d.done, d.hasGroq = false, false, false
	c := &d.chunk
	resume := !d.unary && d.snap.prefix.Matches(data)
	if resume {
		d.snap.prefix.Resume(s, data)
	} else {
		s.Reset(data)
		if k := s.Kind(); k != jsonx.KindObject {
			if !s.Skip() || !s.End() {
				return nil, s.Err()
			}
			return nil, fmt.Errorf("not a chat chunk: want a JSON object, got %s", k.Name())
		}
	}
	if !d.top(data, resume) || !s.End() {
		return nil, s.Err()
	}
	if c.Usage == nil && d.hasGroq {
		d.usageV = d.groqV
		c.Usage = &d.usageV
	}
	if d.sfxOn {
		if d.sfxPure {
			d.sfx.Record(s, d.sfxAt, maxSnapBytes)
		} else {
			d.sfx.Forget()
		}
	}
	if len(d.choice) > 0 {
		for i := range d.choice {
			sp := d.spans[i]
			ch := &d.choice[i]
			if sp.p1 > sp.p0 {
				ch.Content = d.parts[sp.p0:sp.p1:sp.p1]
			}
			if sp.c1 > sp.c0 {
				ch.ToolCalls = d.calls[sp.c0:sp.c1:sp.c1]
			}
		}
		c.Choices = d.choice
	}
	return c, nil
}

// restore puts the decoder's own results in the state they had after the
// snapshot's prefix (the scanner is already positioned after it).
func (d *chunkDecoder) restore(data []byte) {
	sn, c := &d.snap, &d.chunk
	if sn.idOff >= 0 {
		c.ID = data[sn.idOff : sn.idOff+sn.idLen : sn.idOff+sn.idLen]
	}
	if sn.mOff >= 0 {
		c.Model = data[sn.mOff : sn.mOff+sn.mLen : sn.mOff+sn.mLen]
	}
	d.track.ok = false // the resumed parse does not take a new snapshot
}

// snapshot records the prefix just parsed (the parser stands right after
// the first choice's "delta":). A prefix that does not qualify leaves the
// previous snapshot in place.
func (d *chunkDecoder) snapshot() {
	t, s := &d.track, &d.s
	t.ok = false
	if s.Depth() != snapDepth || !d.snap.prefix.Take(s, maxSnapBytes) {
		return
	}
	d.snap.idOff, d.snap.idLen, d.snap.mOff, d.snap.mLen, d.snap.index = t.idOff, t.idLen, t.mOff, t.mLen, t.index
}

// strAt reads a string field and reports where its value starts in the
// data (-1 when absent), for the prefix snapshot.
func (d *chunkDecoder) strAt() (v []byte, off int, ok bool) {
	s := &d.s
	off = -1
	if s.Kind() == jsonx.KindString {
		off = s.Pos() + 1
	}
	v, present, ok := s.StrField()
	if !present {
		off = -1
	}
	return v, off, ok
}

// top reads the chunk object. It and the other hot walks (choices,
// choiceObj, delta, toolCalls, toolCall, function) walk by hand with
// jsonx.Members and jsonx.Elems; a failed read stops the walk (Next returns
// false, Done reports it), so the reads' results need no checks.
func (d *chunkDecoder) top(data []byte, resume bool) bool {
	s := &d.s
	c := &d.chunk
	t := &d.track
	var m jsonx.Members
	if resume {
		d.restore(data)
		if !d.choices(true) {
			return false
		}
		if d.done {
			return true
		}
		m = s.MembersAfter()
	} else {
		*t = prefixTrack{ok: !d.unary, idOff: -1, mOff: -1}
		m = s.Members()
	}
	for m.Next() {
		switch string(m.Key()) {
		case "choices":
			d.sfxPure = false
			d.choice, d.spans, d.parts, d.calls = d.choice[:0], d.spans[:0], d.parts[:0], d.calls[:0]
			if s.Kind() != jsonx.KindArray {
				t.ok = false
				s.Skip()
				break
			}
			d.choices(false)
			t.ok = false // only the first choices array of the chunk qualifies
		case "id":
			var off int
			d.sfxPure = false
			c.ID, off, _ = d.strAt()
			t.idOff, t.idLen = off, len(c.ID)
		case "model":
			var off int
			d.sfxPure = false
			c.Model, off, _ = d.strAt()
			t.mOff, t.mLen = off, len(c.Model)
		case "usage":
			t.ok = false
			if s.Kind() == jsonx.KindObject {
				d.sfxPure = false
			}
			d.usage()
		case "x_groq":
			// Groq puts the usage of a stream in x_groq.usage
			// (docs/streams.md#chat-completions-streams); a top-level
			// usage object wins (decode).
			t.ok = false
			d.sfxPure = false
			d.groq()
		case "error":
			t.ok = false
			if s.Kind() != jsonx.KindNull {
				d.sfxPure = false
			}
			d.errorValue()
		default:
			s.Skip()
		}
	}
	return m.Done()
}

func (d *chunkDecoder) choices(resume bool) bool {
	s := &d.s
	var e jsonx.Elems
	if resume {
		d.choice = append(d.choice, Choice{Index: d.snap.index})
		d.spans = append(d.spans, span{})
		if !d.choiceObj(0, true) {
			return false
		}
		if d.done {
			return true
		}
		e = s.ElemsAfter()
	} else {
		e = s.Elems()
	}
	for e.Next() {
		d.sfxPure = false
		if s.Kind() != jsonx.KindObject {
			d.track.ok = false
			s.Skip()
			continue
		}
		d.choice = append(d.choice, Choice{})
		d.spans = append(d.spans, span{p0: len(d.parts), p1: len(d.parts), c0: len(d.calls), c1: len(d.calls)})
		d.choiceObj(len(d.choice)-1, false)
		d.track.ok = false // only the first choice qualifies
	}
	return e.Done()
}

func (d *chunkDecoder) choiceObj(i int, resume bool) bool {
	s := &d.s
	t := &d.track
	var m jsonx.Members
	if resume {
		if !d.delta(i) {
			return false
		}
		if d.sfx.SkipRest(s) {
			d.done = true
			return true
		}
		d.sfxOn, d.sfxPure, d.sfxAt = true, true, s.Pos()
		m = s.MembersAfter()
	} else {
		m = s.Members()
	}
	for m.Next() {
		switch string(m.Key()) {
		case "index":
			d.sfxPure = false
			d.choice[i].Index, _, _ = s.IntField()
			t.index = d.choice[i].Index
		case "delta":
			d.sfxPure = false
			if d.unary {
				s.Skip()
				break
			}
			snap := t.ok
			if snap {
				d.snapshot()
			}
			d.delta(i)
			if snap {
				d.sfxOn, d.sfxPure, d.sfxAt = true, true, s.Pos()
			}
		case "message":
			t.ok = false
			d.sfxPure = false
			if d.unary {
				d.delta(i)
			} else {
				s.Skip()
			}
		case "finish_reason":
			t.ok = false
			if s.Kind() == jsonx.KindString {
				d.sfxPure = false
			}
			d.choice[i].FinishReason, _, _ = s.StrField()
		default:
			s.Skip()
		}
	}
	return m.Done()
}

// delta reads choices[i].delta (or .message in unary mode), replacing what an
// earlier "delta" member of the same choice gave.
func (d *chunkDecoder) delta(i int) bool {
	s := &d.s
	sp := &d.spans[i]
	d.parts, d.calls = d.parts[:sp.p0], d.calls[:sp.c0]
	sp.p1, sp.c1 = sp.p0, sp.c0
	ch := &d.choice[i]
	ch.Reasoning, ch.ReasoningSource, ch.Refusal = nil, ReasoningNone, nil
	if s.Kind() != jsonx.KindObject {
		return s.Skip()
	}
	var rc, rf, rd, rt []byte
	m := s.Members()
	for m.Next() {
		switch string(m.Key()) {
		case "content":
			d.parts = d.parts[:sp.p0]
			d.think = d.think[:0]
			d.content()
			sp.p1 = len(d.parts)
			if len(d.think) > 0 {
				rt = s.Join(d.think)
			}
		case "reasoning_content":
			rc, _, _ = s.StrField()
		case "refusal":
			d.choice[i].Refusal, _, _ = s.StrField()
		case "reasoning":
			rf, _ = d.textOrObject()
		case "reasoning_details":
			rd, _ = d.reasoningDetails()
		case "tool_calls":
			d.calls = d.calls[:sp.c0]
			d.toolCalls()
			sp.c1 = len(d.calls)
		default:
			s.Skip()
		}
	}
	if !m.Done() {
		return false
	}
	ch = &d.choice[i]
	switch {
	case len(rc) > 0:
		ch.Reasoning, ch.ReasoningSource = rc, ReasoningContent
	case len(rf) > 0:
		ch.Reasoning, ch.ReasoningSource = rf, ReasoningField
	case len(rd) > 0:
		ch.Reasoning, ch.ReasoningSource = rd, ReasoningDetails
	case len(rt) > 0:
		ch.Reasoning, ch.ReasoningSource = rt, ReasoningThinkingParts
	}
	return true
}

// content reads delta.content into the parts pool: a string, an object's
// "text", or the "text" of every object of an array.
func (d *chunkDecoder) content() bool {
	s := &d.s
	switch s.Kind() {
	case jsonx.KindString:
		v, ok := s.Str()
		if ok {
			d.parts = append(d.parts, v)
		}
		return ok
	case jsonx.KindObject:
		return d.textPart()
	case jsonx.KindArray:
		return s.Objects(d.textPart)
	}
	return s.Skip()
}

// textPart reads a content part object into the parts pool, when it has a
// string "text"; the texts of a thinking part ({"type":"thinking",
// "thinking":[{"type":"text","text"}…]} or a string "thinking", Mistral's
// reasoning models) go to the delta's thinking texts instead.
func (d *chunkDecoder) textPart() bool {
	s := &d.s
	var text []byte
	var thinking bool
	n := len(d.think)
	ok := s.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "text":
			text, _, ok = s.StrField()
		case "type":
			var typ []byte
			typ, _, ok = s.StrField()
			thinking = string(typ) == "thinking"
		case "thinking":
			d.think = d.think[:n] // the last "thinking" member counts
			switch s.Kind() {
			case jsonx.KindString:
				var v []byte
				if v, ok = s.Str(); ok && len(v) > 0 {
					d.think = append(d.think, v)
				}
			case jsonx.KindArray:
				ok = s.Objects(func() bool {
					v, ok := d.textMember("text", "")
					if ok && len(v) > 0 {
						d.think = append(d.think, v)
					}
					return ok
				})
			default:
				ok = s.Skip()
			}
		default:
			ok = s.Skip()
		}
		return ok
	})
	if !thinking {
		d.think = d.think[:n] // a "thinking" member of another part is not reasoning
		if ok && text != nil {
			d.parts = append(d.parts, text)
		}
	}
	return ok
}

// textMember reads an object and returns its string member a, or, when that
// is absent or empty and b is not "", its string member b.
func (d *chunkDecoder) textMember(a, b string) ([]byte, bool) {
	s := &d.s
	var va, vb []byte
	ok := s.Object(func(key []byte) bool {
		var ok bool
		switch {
		case string(key) == a:
			va, _, ok = s.StrField()
		case b != "" && string(key) == b:
			vb, _, ok = s.StrField()
		default:
			ok = s.Skip()
		}
		return ok
	})
	if !ok {
		return nil, false
	}
	if len(va) == 0 && b != "" && vb != nil {
		return vb, true
	}
	return va, true
}

// textOrObject reads delta.reasoning: a string, or an object whose "text"
// (else "content") is the text.
func (d *chunkDecoder) textOrObject() ([]byte, bool) {
	s := &d.s
	switch s.Kind() {
	case jsonx.KindString:
		return s.Str()
	case jsonx.KindObject:
		return d.textMember("text", "content")
	}
	return nil, s.Skip()
}

// reasoningDetails reads delta.reasoning_details and returns the
// concatenated "text" (else "summary") of its entries.
func (d *chunkDecoder) reasoningDetails() ([]byte, bool) {
	s := &d.s
	d.tmp = d.tmp[:0]
	ok := s.Objects(func() bool {
		v, ok := d.textMember("text", "summary")
		if ok && len(v) > 0 {
			d.tmp = append(d.tmp, v)
		}
		return ok
	})
	if !ok {
		return nil, false
	}
	return s.Join(d.tmp), true
}

// toolCalls reads delta.tool_calls into the calls pool. Tool-call
// fragments come in many chunks, so this walk, like the other hot ones, is
// written out by hand (no callbacks).
func (d *chunkDecoder) toolCalls() bool {
	s := &d.s
	if s.Kind() != jsonx.KindArray {
		return s.Skip()
	}
	e := s.Elems()
	for e.Next() {
		if s.Kind() != jsonx.KindObject {
			s.Skip()
		} else {
			d.calls = append(d.calls, ToolCall{})
			d.toolCall(&d.calls[len(d.calls)-1])
		}
	}
	return e.Done()
}

func (d *chunkDecoder) toolCall(t *ToolCall) bool {
	s := &d.s
	m := s.Members()
	for m.Next() {
		switch string(m.Key()) {
		case "index":
			var v int64
			var present bool
			v, present, _ = s.IntField()
			t.Index, t.HasIndex = 0, false
			if present && v >= 0 && v <= maxIndex {
				t.Index, t.HasIndex = int(v), true
			}
		case "id":
			t.ID, _, _ = s.StrField()
		case "type":
			t.Type, _, _ = s.StrField()
		case "function":
			t.Name, t.Arguments, t.ArgumentsJSON = nil, nil, false
			if s.Kind() != jsonx.KindObject {
				s.Skip()
				break
			}
			d.function(t)
		case "extra_content":
			t.ExtraContent = nil
			if s.Kind() == jsonx.KindNull {
				s.Skip()
				break
			}
			t.ExtraContent, _ = s.Raw()
		default:
			s.Skip()
		}
	}
	return m.Done()
}

// maxIndex bounds tool-call indices: a larger one is treated as absent, so
// that a hostile index cannot make chat.finalize allocate a huge slot list.
const maxIndex = 1 << 12

func (d *chunkDecoder) function(t *ToolCall) bool {
	s := &d.s
	m := s.Members()
	for m.Next() {
		switch string(m.Key()) {
		case "name":
			t.Name, _, _ = s.StrField()
		case "arguments":
			t.Arguments, t.ArgumentsJSON = nil, false
			switch s.Kind() {
			case jsonx.KindString:
				t.Arguments, _ = s.Str()
			case jsonx.KindObject, jsonx.KindArray:
				if raw, ok := s.Raw(); ok {
					t.Arguments, t.ArgumentsJSON = s.Compact(raw), true
				}
			default:
				s.Skip()
			}
		default:
			s.Skip()
		}
	}
	return m.Done()
}

// groq reads Groq's x_groq object: its usage member (the last one, when
// it is an object) is kept in groqV; the last x_groq member counts.
func (d *chunkDecoder) groq() bool {
	s := &d.s
	d.hasGroq = false
	if s.Kind() != jsonx.KindObject {
		return s.Skip()
	}
	return s.Object(func(key []byte) bool {
		if string(key) != "usage" {
			return s.Skip()
		}
		saved, savedV := d.chunk.Usage, d.usageV
		ok := d.usage()
		d.hasGroq = ok && d.chunk.Usage != nil
		if d.hasGroq {
			d.groqV = d.usageV
		}
		d.chunk.Usage, d.usageV = saved, savedV
		return ok
	})
}

func (d *chunkDecoder) usage() bool {
	s := &d.s
	c := &d.chunk
	c.Usage = nil
	if s.Kind() != jsonx.KindObject {
		return s.Skip()
	}
	var (
		u                                 Usage
		hasPrompt, hasCompletion          bool
		detCached, topCached, hitCached   int64
		hasDet, hasTop, hasHit, hasReason bool
	)
	ok := s.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "prompt_tokens":
			u.PromptTokens, hasPrompt, ok = s.IntField()
		case "completion_tokens":
			u.CompletionTokens, hasCompletion, ok = s.IntField()
		case "total_tokens":
			u.TotalTokens, u.HasTotal, ok = s.IntField()
		case "cached_tokens":
			topCached, hasTop, ok = s.IntField()
		case "prompt_cache_hit_tokens":
			hitCached, hasHit, ok = s.IntField()
		case "prompt_tokens_details":
			detCached, hasDet, ok = d.intMember("cached_tokens")
		case "completion_tokens_details":
			u.ReasoningTokens, hasReason, ok = d.intMember("reasoning_tokens")
		default:
			ok = s.Skip()
		}
		return ok
	})
	if !ok {
		return false
	}
	switch {
	case hasDet:
		u.CachedTokens = detCached
	case hasTop:
		u.CachedTokens = topCached
	case hasHit:
		u.CachedTokens = hitCached
	}
	if !hasPrompt {
		u.PromptTokens = 0
	}
	if !hasCompletion {
		u.CompletionTokens = 0
	}
	if !u.HasTotal {
		u.TotalTokens = 0
	}
	if !hasReason {
		u.ReasoningTokens = 0
	}
	u.Known = hasPrompt || hasCompletion || u.HasTotal || hasDet || hasTop || hasHit || hasReason
	d.usageV = u
	c.Usage = &d.usageV
	return true
}

// intMember reads an object (anything else is absent) and returns its
// integer member name.
func (d *chunkDecoder) intMember(name string) (v int64, present, ok bool) {
	s := &d.s
	if s.Kind() != jsonx.KindObject {
		return 0, false, s.Skip()
	}
	ok = s.Object(func(key []byte) bool {
		if string(key) != name {
			return s.Skip()
		}
		var ok bool
		v, present, ok = s.IntField()
		return ok
	})
	if !ok {
		return 0, false, false
	}
	return v, present, true
}

func (d *chunkDecoder) errorValue() bool {
	s := &d.s
	c := &d.chunk
	c.Kind, c.Error = ChunkData, nil
	if s.Kind() == jsonx.KindNull {
		return s.Skip()
	}
	d.errV = ErrorObject{}
	c.Kind, c.Error = ChunkError, &d.errV
	e := c.Error
	var ok bool
	switch s.Kind() {
	case jsonx.KindString:
		e.Message, ok = s.Str()
		return ok
	case jsonx.KindObject:
	default:
		e.Message, ok = s.Raw()
		return ok
	}
	return s.Object(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "message":
			e.Message, _, ok = s.StrField()
		case "type":
			e.Type, _, ok = s.StrField()
		case "code":
			e.Code = nil
			switch s.Kind() {
			case jsonx.KindString:
				e.Code, ok = s.Str()
			case jsonx.KindNumber:
				e.Code, _, ok = s.Num()
			default:
				ok = s.Skip()
			}
		default:
			ok = s.Skip()
		}
		return ok
	})
}

// DecodeName is the name of the chat.decode node.
const DecodeName = "chat.decode"

// decodeStage is chat.decode: sse.Event → Chunk.
type decodeStage struct {
	dec   chunkDecoder
	ended bool // [DONE] or an error was passed on: the stream is over
}

// NewDecodeStage returns a fresh chat.decode stage: it parses the data of
// every SSE event as a chat chunk. Events whose data is empty or whitespace
// are skipped; "[DONE]" becomes a ChunkDone; an event with a non-null
// top-level "error" (or an event named "error") becomes a ChunkError; the
// sse truncation marker becomes a ChunkTruncated, and the end of input a
// ChunkEOF, so the chunk stream always says how it ended. After a ChunkDone
// or a ChunkError every later event is ignored, so nothing after the end of
// the stream can fail the run. Malformed JSON is a fatal error (a
// *DecodeError naming the event's byte offset).
func NewDecodeStage() pipeline.Stage[sse.Event, Chunk] { return &decodeStage{} }

// Push decodes one SSE event.
func (st *decodeStage) Push(_ context.Context, ev sse.Event, emit func(Chunk)) error {
	if st.ended {
		return nil
	}
	if ev.Truncated {
		emit(Chunk{Kind: ChunkTruncated, Offset: ev.Offset})
		return nil
	}
	data := jsonx.TrimSpace(ev.Data)
	if len(data) == 0 {
		return nil
	}
	if string(data) == "[DONE]" {
		st.ended = true
		emit(Chunk{Kind: ChunkDone, Offset: ev.Offset})
		return nil
	}
	c, err := st.dec.decode(data)
	if err != nil {
		if ev.Type == "error" {
			// A named error event whose data is not JSON: its text is the message.
			st.ended = true
			st.dec.errV = ErrorObject{Message: data}
			emit(Chunk{Kind: ChunkError, Offset: ev.Offset, Error: &st.dec.errV})
			return nil
		}
		return jsonx.NewDecodeError(ev.Type, ev.Offset, jsonx.NotJSON("data line", data, err))
	}
	if ev.Type == "error" && c.Kind != ChunkError {
		// event: error with an error object as the whole payload.
		c = st.dec.bareError(data)
		c.Kind = ChunkError
	}
	c.Offset = ev.Offset
	if c.Kind == ChunkError {
		st.ended = true
	}
	emit(*c)
	return nil
}

// Finish ends the chunk stream with a ChunkEOF unless [DONE] or an error
// already ended it.
func (st *decodeStage) Finish(ctx context.Context, emit func(Chunk)) error {
	if st.ended {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	st.ended = true
	emit(Chunk{Kind: ChunkEOF})
	return nil
}

// bareError reads data, already known to be valid JSON, as an error value.
func (d *chunkDecoder) bareError(data []byte) *Chunk {
	d.s.Reset(data)
	d.chunk = Chunk{}
	d.errorValue()
	return &d.chunk
}

// DecodeError is the fatal error of chat.decode and chat.unary for input
// that is not a JSON object: Event is the SSE event's type ("message" for
// an unnamed event; empty for chat.unary's body), Offset its byte offset in
// the stream, and Err the cause — a *SyntaxError naming the offset inside
// the data (also in DataOffset), or "not a chat chunk" for valid JSON that
// is not an object. It is the one decode error of the stream packages
// (anthropicstream.DecodeError and responsesstream.DecodeError are the same
// type).
type DecodeError = jsonx.DecodeError

// SyntaxError is a malformed JSON document: Offset is the byte offset inside
// the event's data where reading stopped. Its Error returns "invalid JSON at
// data byte N: MSG".
type SyntaxError = jsonx.SyntaxError
