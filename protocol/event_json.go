package protocol

import (
	"fmt"
	"strconv"
)

// AppendJSON appends the event's JSON (DESIGN §5, "type" first) to dst without reflection.
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
	f := w.open()
	w.str("type", string(e.Type))
	switch e.Type {
	case EventServerModel:
		w.str("model", e.Model)
	case EventOutputItemAdded, EventOutputItemDone:
		w.key("item")
		if e.Item == nil {
			w.b = append(w.b, "null"...)
		} else {
			writeItem(w, e.Item)
		}
	case EventReasoningSummaryPartAdded:
		w.int("summary_index", int64(e.SummaryIndex))
	case EventToolCallInputDelta:
		w.str("item_id", e.ItemID)
		w.strOpt("call_id", e.CallID)
		w.str("delta", e.Delta)
	case EventCompleted:
		w.str("response_id", e.ResponseID)
		if u := e.TokenUsage; u != nil {
			w.key("token_usage")
			uf := w.open()
			w.int("input_tokens", u.InputTokens)
			w.int("cached_input_tokens", u.CachedInputTokens)
			if u.CacheWriteInputTokens != 0 {
				w.int("cache_write_input_tokens", u.CacheWriteInputTokens)
			}
			w.int("output_tokens", u.OutputTokens)
			w.int("reasoning_output_tokens", u.ReasoningOutputTokens)
			w.int("total_tokens", u.TotalTokens)
			w.close(uf)
		}
		if e.EndTurn != nil {
			w.boolPtr("end_turn", e.EndTurn)
		}
		w.strOpt("finish_reason", e.FinishReason)
	case EventFailed:
		w.key("error")
		if x := e.Error; x == nil {
			w.b = append(w.b, "null"...)
		} else {
			xf := w.open()
			w.str("kind", x.Kind)
			w.strOpt("type", x.Type)
			w.strOpt("code", x.Code)
			w.str("message", x.Message)
			w.boolean("retryable", x.Retryable)
			if x.HTTPStatus != 0 {
				w.int("http_status", int64(x.HTTPStatus))
			}
			if x.RetryAfterMS != 0 {
				w.int("retry_after_ms", x.RetryAfterMS)
			}
			w.strOpt("request_id", x.RequestID)
			w.close(xf)
		}
		w.strOpt("response_id", e.ResponseID)
	}
	w.close(f)
	if w.err != nil {
		return dst, fmt.Errorf("protocol: event %s: %w", e.Type, w.err)
	}
	return w.b, nil
}

// MarshalJSON implements json.Marshaler (see AppendJSON).
func (e ResponseEvent) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil) }

// UnmarshalJSON implements json.Unmarshaler. Only the fields that belong to the event's type
// are read; other fields are ignored. An unknown type is kept with no fields.
func (e *ResponseEvent) UnmarshalJSON(data []byte) error {
	d, err := newDec(data)
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
		ev.Model = d.str("model")
	case EventOutputItemAdded, EventOutputItemDone:
		if raw, ok := d.take("item"); ok {
			it, err := decodeItem(raw)
			if err != nil {
				return fmt.Errorf("protocol: event %s: item: %w", typ, err)
			}
			ev.Item = it
		}
	case EventOutputTextDelta:
		ev.Delta = d.str("delta")
	case EventReasoningContentDelta:
		ev.Delta = d.str("delta")
		ev.ContentIndex = d.int("content_index")
	case EventReasoningSummaryDelta:
		ev.Delta = d.str("delta")
		ev.SummaryIndex = d.int("summary_index")
	case EventReasoningSummaryPartAdded:
		ev.SummaryIndex = d.int("summary_index")
	case EventToolCallInputDelta:
		ev.ItemID = d.str("item_id")
		ev.CallID = d.str("call_id")
		ev.Delta = d.str("delta")
	case EventCompleted:
		ev.ResponseID = d.str("response_id")
		d.object("token_usage", func(u *dec) error {
			ev.TokenUsage = &TokenUsage{
				InputTokens:           u.int64("input_tokens"),
				CachedInputTokens:     u.int64("cached_input_tokens"),
				CacheWriteInputTokens: u.int64("cache_write_input_tokens"),
				OutputTokens:          u.int64("output_tokens"),
				ReasoningOutputTokens: u.int64("reasoning_output_tokens"),
				TotalTokens:           u.int64("total_tokens"),
			}
			return u.err
		})
		ev.EndTurn = d.boolPtr("end_turn")
		ev.FinishReason = d.str("finish_reason")
	case EventFailed:
		d.object("error", func(x *dec) error {
			ev.Error = &StreamError{
				Kind:         x.str("kind"),
				Type:         x.str("type"),
				Code:         x.str("code"),
				Message:      x.str("message"),
				Retryable:    x.boolean("retryable"),
				HTTPStatus:   x.int("http_status"),
				RetryAfterMS: x.int64("retry_after_ms"),
				RequestID:    x.str("request_id"),
			}
			return x.err
		})
		ev.ResponseID = d.str("response_id")
	}
	if d.err != nil {
		return fmt.Errorf("protocol: event %s: %w", typ, d.err)
	}
	*e = ev
	return nil
}
