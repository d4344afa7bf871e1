package protocol

import (
	"fmt"
	"strconv"

	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// AppendJSON appends the event's JSON (docs/architecture.md#event-json, "type" first) to dst without reflection.
// The delta events take a direct path that allocates nothing beyond growing dst. An error is
// only possible for events that carry an item holding invalid raw JSON (built by hand); dst
// is then returned unchanged. The output equals MarshalJSON's.
func (e ResponseEvent) AppendJSON(dst []byte) ([]byte, error) {
	switch e.Type {
	case EventOutputTextDelta:
		dst = append(dst, `{"type":"output_text.delta","delta":`...)
		dst = AppendString(dst, e.Delta)
		return append(dst, '}'), nil
	case EventReasoningContentDelta:
		dst = append(dst, `{"type":"reasoning_content.delta","delta":`...)
		dst = AppendString(dst, e.Delta)
		dst = append(dst, `,"content_index":`...)
		dst = strconv.AppendInt(dst, int64(e.ContentIndex), 10)
		return append(dst, '}'), nil
	case EventReasoningSummaryDelta:
		dst = append(dst, `{"type":"reasoning_summary.delta","delta":`...)
		dst = AppendString(dst, e.Delta)
		dst = append(dst, `,"summary_index":`...)
		dst = strconv.AppendInt(dst, int64(e.SummaryIndex), 10)
		return append(dst, '}'), nil
	}
	w := newEnc(dst)
	f := w.Open()
	w.Str("type", string(e.Type))
	switch e.Type {
	case EventServerModel:
		w.Str("model", e.Model)
	case EventOutputItemAdded, EventOutputItemDone:
		w.Key("item")
		if e.Item == nil {
			w.B = append(w.B, "null"...)
		} else {
			writeItem(w, e.Item)
		}
	case EventReasoningSummaryPartAdded:
		w.Int("summary_index", int64(e.SummaryIndex))
	case EventToolCallInputDelta:
		w.Str("item_id", e.ItemID)
		w.StrOpt("call_id", e.CallID)
		w.Str("delta", e.Delta)
	case EventCompleted:
		w.Str("response_id", e.ResponseID)
		if u := e.TokenUsage; u != nil {
			w.Key("token_usage")
			uf := w.Open()
			w.Int("input_tokens", u.InputTokens)
			w.Int("cached_input_tokens", u.CachedInputTokens)
			if u.CacheWriteInputTokens != 0 {
				w.Int("cache_write_input_tokens", u.CacheWriteInputTokens)
			}
			w.Int("output_tokens", u.OutputTokens)
			w.Int("reasoning_output_tokens", u.ReasoningOutputTokens)
			w.Int("total_tokens", u.TotalTokens)
			w.Close(uf)
		}
		w.BoolOpt("end_turn", e.EndTurn)
		w.StrOpt("finish_reason", e.FinishReason)
	case EventFailed:
		w.Key("error")
		if x := e.Error; x == nil {
			w.B = append(w.B, "null"...)
		} else {
			xf := w.Open()
			w.Str("kind", x.Kind)
			w.StrOpt("type", x.Type)
			w.StrOpt("code", x.Code)
			w.Str("message", x.Message)
			w.Bool("retryable", x.Retryable)
			if x.HTTPStatus != 0 {
				w.Int("http_status", int64(x.HTTPStatus))
			}
			if x.RetryAfterMS != 0 {
				w.Int("retry_after_ms", x.RetryAfterMS)
			}
			w.StrOpt("request_id", x.RequestID)
			w.Close(xf)
		}
		w.StrOpt("response_id", e.ResponseID)
	}
	w.Close(f)
	if w.Err != nil {
		return dst, fmt.Errorf("protocol: event %s: %w", e.Type, w.Err)
	}
	return w.B, nil
}

// MarshalJSON implements json.Marshaler (see AppendJSON).
func (e ResponseEvent) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil) }

// UnmarshalJSON implements json.Unmarshaler. Only the fields that belong to the event's type
// are read; other fields are ignored. An unknown type is kept with no fields.
func (e *ResponseEvent) UnmarshalJSON(data []byte) error {
	d, err := jsonx.NewFields(data)
	if err != nil {
		return fmt.Errorf("protocol: event: %w", err)
	}
	typ, err := itemType(d)
	if err != nil {
		return fmt.Errorf("protocol: event: %w", err)
	}
	ev := ResponseEvent{Type: EventType(typ)}
	switch ev.Type {
	case EventServerModel:
		ev.Model = d.Str("model")
	case EventOutputItemAdded, EventOutputItemDone:
		if raw, ok := d.Take("item"); ok {
			it, err := decodeItem(raw)
			if err != nil {
				return fmt.Errorf("protocol: event %s: item: %w", typ, err)
			}
			ev.Item = it
		}
	case EventOutputTextDelta:
		ev.Delta = d.Str("delta")
	case EventReasoningContentDelta:
		ev.Delta = d.Str("delta")
		ev.ContentIndex = d.Int("content_index")
	case EventReasoningSummaryDelta:
		ev.Delta = d.Str("delta")
		ev.SummaryIndex = d.Int("summary_index")
	case EventReasoningSummaryPartAdded:
		ev.SummaryIndex = d.Int("summary_index")
	case EventToolCallInputDelta:
		ev.ItemID = d.Str("item_id")
		ev.CallID = d.Str("call_id")
		ev.Delta = d.Str("delta")
	case EventCompleted:
		ev.ResponseID = d.Str("response_id")
		d.Object("token_usage", func(u *jsonx.Fields) error {
			ev.TokenUsage = &TokenUsage{
				InputTokens:           u.Int64("input_tokens"),
				CachedInputTokens:     u.Int64("cached_input_tokens"),
				CacheWriteInputTokens: u.Int64("cache_write_input_tokens"),
				OutputTokens:          u.Int64("output_tokens"),
				ReasoningOutputTokens: u.Int64("reasoning_output_tokens"),
				TotalTokens:           u.Int64("total_tokens"),
			}
			return u.Err
		})
		ev.EndTurn = d.BoolPtr("end_turn")
		ev.FinishReason = d.Str("finish_reason")
	case EventFailed:
		d.Object("error", func(x *jsonx.Fields) error {
			ev.Error = &StreamError{
				Kind:         x.Str("kind"),
				Type:         x.Str("type"),
				Code:         x.Str("code"),
				Message:      x.Str("message"),
				Retryable:    x.Bool("retryable"),
				HTTPStatus:   x.Int("http_status"),
				RetryAfterMS: x.Int64("retry_after_ms"),
				RequestID:    x.Str("request_id"),
			}
			return x.Err
		})
		ev.ResponseID = d.Str("response_id")
	}
	if d.Err != nil {
		return fmt.Errorf("protocol: event %s: %w", typ, d.Err)
	}
	*e = ev
	return nil
}
