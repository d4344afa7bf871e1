package chatstream

import (
	"bytes"
	"context"
	"fmt"

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
	s      scanner
	unary  bool // read choices[].message instead of choices[].delta
	chunk  Chunk
	usageV Usage       // what chunk.Usage points to
	errV   ErrorObject // what chunk.Error points to
	choice []Choice
	spans  []span
	parts  [][]byte
	calls  []ToolCall
	tmp    [][]byte // reasoning_details texts of the delta being read

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
	sfx     []byte
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
// the state it had after them (id, model, choice index, nesting) and
// resumes parsing at the delta value instead of scanning the prefix again.
// A snapshot is only taken for plain prefixes: no string in it needed
// unescaping, and it holds nothing but the top-level id, model and skipped
// members, the first choice's index and skipped members, and the "delta"
// key of that first choice.
type prefixSnap struct {
	prefix       []byte // the bytes up to and including the ':' after "delta"
	idOff, idLen int    // id within the prefix; idOff < 0 when absent
	mOff, mLen   int    // model within the prefix; mOff < 0 when absent
	index        int64  // the first choice's index
}

// maxSnapBytes bounds the prefix and suffix snapshots: the common ones are
// about 200 and 50 bytes; long ones (a logprobs member, say) differ from
// chunk to chunk anyway, and copying them for nothing would cost time.
const maxSnapBytes = 1024

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
// next decode). On a syntax error it returns a description of the problem
// and the offset in data where it was found.
func (d *chunkDecoder) decode(data []byte) (*Chunk, string, int) {
	s := &d.s
	s.reset(data)
	d.choice, d.spans, d.parts, d.calls = d.choice[:0], d.spans[:0], d.parts[:0], d.calls[:0]
	d.chunk = Chunk{}
	d.sfxOn, d.done = false, false
	c := &d.chunk
	resume := !d.unary && len(d.snap.prefix) > 0 && len(data) > len(d.snap.prefix) &&
		string(data[:len(d.snap.prefix)]) == string(d.snap.prefix)
	if !resume {
		if k := s.kind(); k != kindObject {
			if k == kindNone || !s.skip() || !s.end() {
				return nil, "invalid JSON: " + s.msg(), s.errAt
			}
			return nil, "not a chat chunk: want a JSON object, got " + kindName(k), 0
		}
	}
	if !d.top(resume) || !s.end() {
		return nil, "invalid JSON: " + s.msg(), s.errAt
	}
	if d.sfxOn {
		if d.sfxPure && len(data)-d.sfxAt <= maxSnapBytes {
			d.sfx = append(d.sfx[:0], data[d.sfxAt:]...)
		} else {
			d.sfx = d.sfx[:0]
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
	return c, "", 0
}

// restore puts the decoder in the state it had after the snapshot's prefix.
func (d *chunkDecoder) restore() {
	s, sn, c := &d.s, &d.snap, &d.chunk
	s.pos, s.depth = len(sn.prefix), 3
	if sn.idOff >= 0 {
		c.ID = s.data[sn.idOff : sn.idOff+sn.idLen : sn.idOff+sn.idLen]
	}
	if sn.mOff >= 0 {
		c.Model = s.data[sn.mOff : sn.mOff+sn.mLen : sn.mOff+sn.mLen]
	}
	d.track.ok = false // the resumed parse does not take a new snapshot
}

// snapshot records the prefix just parsed (the parser stands right after
// the first choice's "delta":).
func (d *chunkDecoder) snapshot() {
	t, s := &d.track, &d.s
	t.ok = false
	if len(s.scratch) > 0 || s.depth != 3 || s.pos > maxSnapBytes {
		return // a string of the prefix needed unescaping (or it is long): not plain
	}
	d.snap = prefixSnap{prefix: append(d.snap.prefix[:0], s.data[:s.pos]...),
		idOff: t.idOff, idLen: t.idLen, mOff: t.mOff, mLen: t.mLen, index: t.index}
}

// strAt reads a string field and reports where its value starts in data
// (-1 when absent), for the prefix snapshot.
func (s *scanner) strAt() (v []byte, off int, ok bool) {
	off = -1
	if s.kind() == kindString {
		off = s.pos + 1
	}
	v, present, ok := s.strField()
	if !present {
		off = -1
	}
	return v, off, ok
}

func (s *scanner) msg() string {
	if s.err == "" {
		return "unexpected end of input"
	}
	return s.err
}

func kindName(k byte) string {
	switch k {
	case kindString:
		return "a string"
	case kindArray:
		return "an array"
	case kindNull:
		return "null"
	case kindTrue, kindFalse:
		return "a boolean"
	case kindNumber:
		return "a number"
	}
	return "something else"
}

func (d *chunkDecoder) top(resume bool) bool {
	s := &d.s
	c := &d.chunk
	t := &d.track
	first := true
	if resume {
		d.restore()
		if !d.choices(true) {
			return false
		}
		if d.done {
			return true
		}
		first = false
	} else {
		*t = prefixTrack{ok: !d.unary, idOff: -1, mOff: -1}
		if !s.enter('{') {
			return false
		}
	}
	for ; ; first = false {
		key, more, ok := s.rawKey(first)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		switch string(key) {
		case "choices":
			d.sfxPure = false
			d.choice, d.spans, d.parts, d.calls = d.choice[:0], d.spans[:0], d.parts[:0], d.calls[:0]
			if s.kind() != kindArray {
				t.ok = false
				ok = s.skip()
				break
			}
			ok = d.choices(false)
			t.ok = false // only the first choices array of the chunk qualifies
		case "id":
			var off int
			d.sfxPure = false
			c.ID, off, ok = s.strAt()
			t.idOff, t.idLen = off, len(c.ID)
		case "model":
			var off int
			d.sfxPure = false
			c.Model, off, ok = s.strAt()
			t.mOff, t.mLen = off, len(c.Model)
		case "usage":
			t.ok = false
			if s.kind() == kindObject {
				d.sfxPure = false
			}
			ok = d.usage()
		case "error":
			t.ok = false
			if s.kind() != kindNull {
				d.sfxPure = false
			}
			ok = d.errorValue()
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

func (d *chunkDecoder) choices(resume bool) bool {
	s := &d.s
	first := true
	if resume {
		d.choice = append(d.choice, Choice{Index: d.snap.index})
		d.spans = append(d.spans, span{})
		if !d.choiceObj(0, true) {
			return false
		}
		if d.done {
			return true
		}
		first = false
	} else if !s.enter('[') {
		return false
	}
	for ; ; first = false {
		more, ok := s.elem(first)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		d.sfxPure = false
		if s.kind() != kindObject {
			d.track.ok = false
			if !s.skip() {
				return false
			}
			continue
		}
		d.choice = append(d.choice, Choice{})
		d.spans = append(d.spans, span{p0: len(d.parts), p1: len(d.parts), c0: len(d.calls), c1: len(d.calls)})
		if !d.choiceObj(len(d.choice)-1, false) {
			return false
		}
		d.track.ok = false // only the first choice qualifies
	}
}

func (d *chunkDecoder) choiceObj(i int, resume bool) bool {
	s := &d.s
	t := &d.track
	first := true
	if resume {
		if !d.delta(i) {
			return false
		}
		if len(d.sfx) > 0 && string(s.data[s.pos:]) == string(d.sfx) {
			s.pos, s.depth, d.done = len(s.data), 0, true
			return true
		}
		d.sfxOn, d.sfxPure, d.sfxAt = true, true, s.pos
		first = false
	} else if !s.enter('{') {
		return false
	}
	for ; ; first = false {
		key, more, ok := s.rawKey(first)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		switch string(key) {
		case "index":
			d.sfxPure = false
			d.choice[i].Index, _, ok = s.intField()
			t.index = d.choice[i].Index
		case "delta":
			d.sfxPure = false
			if d.unary {
				ok = s.skip()
				break
			}
			snap := t.ok
			if snap {
				d.snapshot()
			}
			ok = d.delta(i)
			if snap {
				d.sfxOn, d.sfxPure, d.sfxAt = true, true, s.pos
			}
		case "message":
			t.ok = false
			d.sfxPure = false
			if d.unary {
				ok = d.delta(i)
			} else {
				ok = s.skip()
			}
		case "finish_reason":
			t.ok = false
			if s.kind() == kindString {
				d.sfxPure = false
			}
			d.choice[i].FinishReason, _, ok = s.strField()
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
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
	if s.kind() != kindObject {
		return s.skip()
	}
	var rc, rf, rd []byte
	if !s.enter('{') {
		return false
	}
	for first := true; ; first = false {
		key, more, ok := s.rawKey(first)
		if !ok {
			return false
		}
		if !more {
			break
		}
		switch string(key) {
		case "content":
			d.parts = d.parts[:sp.p0]
			ok = d.content()
			sp.p1 = len(d.parts)
		case "reasoning_content":
			rc, _, ok = s.strField()
		case "refusal":
			d.choice[i].Refusal, _, ok = s.strField()
		case "reasoning":
			rf, ok = d.textOrObject()
		case "reasoning_details":
			rd, ok = d.reasoningDetails()
		case "tool_calls":
			d.calls = d.calls[:sp.c0]
			ok = d.toolCalls()
			sp.c1 = len(d.calls)
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
	ch = &d.choice[i]
	switch {
	case len(rc) > 0:
		ch.Reasoning, ch.ReasoningSource = rc, ReasoningContent
	case len(rf) > 0:
		ch.Reasoning, ch.ReasoningSource = rf, ReasoningField
	case len(rd) > 0:
		ch.Reasoning, ch.ReasoningSource = rd, ReasoningDetails
	}
	return true
}

// content reads delta.content into the parts pool.
func (d *chunkDecoder) content() bool {
	s := &d.s
	switch s.kind() {
	case kindString:
		v, ok := s.str()
		if ok {
			d.parts = append(d.parts, v)
		}
		return ok
	case kindObject:
		v, ok := d.textMember("text", "")
		if ok && v != nil {
			d.parts = append(d.parts, v)
		}
		return ok
	case kindArray:
		if !s.enter('[') {
			return false
		}
		for first := true; ; first = false {
			more, ok := s.elem(first)
			if !ok {
				return false
			}
			if !more {
				return true
			}
			if s.kind() != kindObject {
				if !s.skip() {
					return false
				}
				continue
			}
			v, ok := d.textMember("text", "")
			if !ok {
				return false
			}
			if v != nil {
				d.parts = append(d.parts, v)
			}
		}
	}
	return s.skip()
}

// textMember reads an object and returns its string member a, or, when that
// is absent or empty and b is not "", its string member b.
func (d *chunkDecoder) textMember(a, b string) ([]byte, bool) {
	s := &d.s
	if !s.enter('{') {
		return nil, false
	}
	var va, vb []byte
	for first := true; ; first = false {
		key, more, ok := s.rawKey(first)
		if !ok {
			return nil, false
		}
		if !more {
			break
		}
		switch {
		case string(key) == a:
			va, _, ok = s.strField()
		case b != "" && string(key) == b:
			vb, _, ok = s.strField()
		default:
			ok = s.skip()
		}
		if !ok {
			return nil, false
		}
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
	switch s.kind() {
	case kindString:
		return s.str()
	case kindObject:
		return d.textMember("text", "content")
	}
	return nil, s.skip()
}

// reasoningDetails reads delta.reasoning_details and returns the
// concatenated "text" (else "summary") of its entries.
func (d *chunkDecoder) reasoningDetails() ([]byte, bool) {
	s := &d.s
	if s.kind() != kindArray {
		return nil, s.skip()
	}
	d.tmp = d.tmp[:0]
	if !s.enter('[') {
		return nil, false
	}
	for first := true; ; first = false {
		more, ok := s.elem(first)
		if !ok {
			return nil, false
		}
		if !more {
			break
		}
		if s.kind() != kindObject {
			if !s.skip() {
				return nil, false
			}
			continue
		}
		v, ok := d.textMember("text", "summary")
		if !ok {
			return nil, false
		}
		if len(v) > 0 {
			d.tmp = append(d.tmp, v)
		}
	}
	switch len(d.tmp) {
	case 0:
		return nil, true
	case 1:
		return d.tmp[0], true
	}
	start := len(s.scratch)
	for _, t := range d.tmp {
		s.scratch = append(s.scratch, t...)
	}
	return s.scratch[start:len(s.scratch):len(s.scratch)], true
}

func (d *chunkDecoder) toolCalls() bool {
	s := &d.s
	if s.kind() != kindArray {
		return s.skip()
	}
	if !s.enter('[') {
		return false
	}
	for first := true; ; first = false {
		more, ok := s.elem(first)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		if s.kind() != kindObject {
			if !s.skip() {
				return false
			}
			continue
		}
		d.calls = append(d.calls, ToolCall{})
		if !d.toolCall(&d.calls[len(d.calls)-1]) {
			return false
		}
	}
}

func (d *chunkDecoder) toolCall(t *ToolCall) bool {
	s := &d.s
	if !s.enter('{') {
		return false
	}
	for first := true; ; first = false {
		key, more, ok := s.rawKey(first)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		switch string(key) {
		case "index":
			var v int64
			var present bool
			v, present, ok = s.intField()
			t.Index, t.HasIndex = 0, false
			if present && v >= 0 && v <= maxIndex {
				t.Index, t.HasIndex = int(v), true
			}
		case "id":
			t.ID, _, ok = s.strField()
		case "type":
			t.Type, _, ok = s.strField()
		case "function":
			t.Name, t.Arguments, t.ArgumentsJSON = nil, nil, false
			if s.kind() != kindObject {
				ok = s.skip()
				break
			}
			ok = d.function(t)
		case "extra_content":
			t.ExtraContent = nil
			if s.kind() == kindNull {
				ok = s.skip()
				break
			}
			t.ExtraContent, ok = s.raw()
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

// maxIndex bounds tool-call indices: a larger one is treated as absent, so
// that a hostile index cannot make chat.finalize allocate a huge slot list.
const maxIndex = 1 << 12

func (d *chunkDecoder) function(t *ToolCall) bool {
	s := &d.s
	if !s.enter('{') {
		return false
	}
	for first := true; ; first = false {
		key, more, ok := s.rawKey(first)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		switch string(key) {
		case "name":
			t.Name, _, ok = s.strField()
		case "arguments":
			t.Arguments, t.ArgumentsJSON = nil, false
			switch s.kind() {
			case kindString:
				t.Arguments, ok = s.str()
			case kindObject, kindArray:
				var raw []byte
				raw, ok = s.raw()
				if ok {
					t.Arguments, t.ArgumentsJSON = s.compact(raw), true
				}
			default:
				ok = s.skip()
			}
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
}

// compact copies the valid JSON value raw into scratch without the
// whitespace outside strings, as json.Compact does.
func (s *scanner) compact(raw []byte) []byte {
	if bytes.IndexAny(raw, " \t\r\n") < 0 {
		return raw
	}
	start := len(s.scratch)
	in := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if in {
			s.scratch = append(s.scratch, c)
			switch c {
			case '\\':
				i++
				s.scratch = append(s.scratch, raw[i])
			case '"':
				in = false
			}
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
		case '"':
			in = true
			s.scratch = append(s.scratch, c)
		default:
			s.scratch = append(s.scratch, c)
		}
	}
	return s.scratch[start:len(s.scratch):len(s.scratch)]
}

func (d *chunkDecoder) usage() bool {
	s := &d.s
	c := &d.chunk
	c.Usage = nil
	if s.kind() != kindObject {
		return s.skip()
	}
	var (
		u                                 Usage
		hasPrompt, hasCompletion          bool
		detCached, topCached, hitCached   int64
		hasDet, hasTop, hasHit, hasReason bool
	)
	if !s.enter('{') {
		return false
	}
	for first := true; ; first = false {
		key, more, ok := s.rawKey(first)
		if !ok {
			return false
		}
		if !more {
			break
		}
		switch string(key) {
		case "prompt_tokens":
			u.PromptTokens, hasPrompt, ok = s.intField()
		case "completion_tokens":
			u.CompletionTokens, hasCompletion, ok = s.intField()
		case "total_tokens":
			u.TotalTokens, u.HasTotal, ok = s.intField()
		case "cached_tokens":
			topCached, hasTop, ok = s.intField()
		case "prompt_cache_hit_tokens":
			hitCached, hasHit, ok = s.intField()
		case "prompt_tokens_details":
			detCached, hasDet, ok = d.intMember("cached_tokens")
		case "completion_tokens_details":
			u.ReasoningTokens, hasReason, ok = d.intMember("reasoning_tokens")
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
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
func (d *chunkDecoder) intMember(name string) (int64, bool, bool) {
	s := &d.s
	if s.kind() != kindObject {
		return 0, false, s.skip()
	}
	var v int64
	var present bool
	if !s.enter('{') {
		return 0, false, false
	}
	for first := true; ; first = false {
		key, more, ok := s.rawKey(first)
		if !ok {
			return 0, false, false
		}
		if !more {
			return v, present, true
		}
		if string(key) == name {
			v, present, ok = s.intField()
		} else {
			ok = s.skip()
		}
		if !ok {
			return 0, false, false
		}
	}
}

func (d *chunkDecoder) errorValue() bool {
	s := &d.s
	c := &d.chunk
	c.Kind, c.Error = ChunkData, nil
	if s.kind() == kindNull {
		return s.skip()
	}
	d.errV = ErrorObject{}
	c.Kind, c.Error = ChunkError, &d.errV
	e := c.Error
	switch s.kind() {
	case kindString:
		v, ok := s.str()
		e.Message = v
		return ok
	case kindObject:
	default:
		raw, ok := s.raw()
		e.Message = raw
		return ok
	}
	if !s.enter('{') {
		return false
	}
	for first := true; ; first = false {
		key, more, ok := s.rawKey(first)
		if !ok {
			return false
		}
		if !more {
			return true
		}
		switch string(key) {
		case "message":
			e.Message, _, ok = s.strField()
		case "type":
			e.Type, _, ok = s.strField()
		case "code":
			e.Code = nil
			switch s.kind() {
			case kindString:
				e.Code, ok = s.str()
			case kindNumber:
				e.Code, _, ok = s.num()
			default:
				ok = s.skip()
			}
		default:
			ok = s.skip()
		}
		if !ok {
			return false
		}
	}
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
	data := trimSpace(ev.Data)
	if len(data) == 0 {
		return nil
	}
	if string(data) == "[DONE]" {
		st.ended = true
		emit(Chunk{Kind: ChunkDone, Offset: ev.Offset})
		return nil
	}
	c, msg, at := st.dec.decode(data)
	if msg != "" {
		if ev.Type == "error" {
			// A named error event whose data is not JSON: its text is the message.
			st.ended = true
			st.dec.errV = ErrorObject{Message: data}
			emit(Chunk{Kind: ChunkError, Offset: ev.Offset, Error: &st.dec.errV})
			return nil
		}
		return &DecodeError{Offset: ev.Offset, DataOffset: at, Problem: msg}
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
	d.s.reset(data)
	d.chunk = Chunk{}
	d.errorValue()
	return &d.chunk
}

// trimSpace trims ASCII whitespace without allocating.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 {
		c := b[len(b)-1]
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		b = b[:len(b)-1]
	}
	return b
}

// DecodeError is the fatal error of chat.decode (and chat.unary) for input
// that is not a JSON object.
type DecodeError struct {
	// Offset is the byte offset of the SSE event in the stream (for
	// chat.unary: 0, the body).
	Offset int64
	// DataOffset is where in the event's data the problem was found.
	DataOffset int
	// Problem describes what is wrong, e.g. "invalid JSON: unexpected end
	// of input".
	Problem string
	// Unary is set for errors of chat.unary.
	Unary bool
}

// Error returns e.g. "chat.decode: event at byte 1234: invalid JSON:
// unexpected end of input (data byte 57)".
func (e *DecodeError) Error() string {
	if e.Unary {
		return fmt.Sprintf("%s: body: %s (byte %d)", UnaryName, e.Problem, e.DataOffset)
	}
	return fmt.Sprintf("%s: event at byte %d: %s (data byte %d)", DecodeName, e.Offset, e.Problem, e.DataOffset)
}
