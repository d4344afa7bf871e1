// Package sse implements the sse.decode stage: it turns the raw bytes of a
// text/event-stream response into Server-Sent Events, following the WHATWG
// "event stream interpretation" algorithm (HTML §9.2.6), incrementally.
//
//	in  (chunks): |data: {"a"|:1}\n\nevent: pi|ng\ndata:\n\n|data: cut|  (EOF)
//	out (events):              {message,`{"a":1}`}   {ping,``}     {Truncated}
//
// # Framing rules
//
//   - One UTF-8 BOM (EF BB BF) is dropped at the start of the stream, even when
//     it is split across chunks. A BOM anywhere else is data.
//   - Lines end with LF, CR or CRLF, mixed freely; a CR at the end of one chunk
//     followed by LF at the start of the next is one line ending.
//   - Lines starting with ':' are comments and are ignored.
//   - "name:value" splits at the first ':'; one leading U+0020 is removed from
//     the value (only one). A line without ':' is a field with an empty value.
//   - Field names are case-sensitive. data appends to the data buffer (lines
//     joined with "\n"); event sets the type; id sets the last event ID unless
//     the value contains NUL (it persists across events, an empty value clears
//     it); retry sets the reconnection time if the value is all ASCII digits.
//     Other fields are ignored.
//   - A blank line dispatches the event if at least one data line was seen;
//     a block with only event/id/retry/unknown fields dispatches nothing. The
//     type is "message" when no (non-empty) event field was seen.
//
// Chunk boundaries never change the output: feeding a stream whole, one byte
// at a time or in any other split yields identical events.
//
// # Borrowed memory
//
// The decoder allocates nothing per event in steady state. An emitted Event
// borrows memory: Data and ID point into the caller's chunk or into the
// decoder's buffers and are valid only until emit returns. Call Event.Own
// to keep an event longer (the async engine does so before an event crosses
// goroutines). Type is an ordinary string and is always safe to keep.
//
// # Truncation
//
// Per the specification an event that is not closed by a blank line at end of
// stream is not dispatched, and neither is an unterminated last line. Because
// an LLM stream cut mid-event must be reported, Finish then emits one final
// marker Event with Truncated set (Type "", Data nil, Offset = where the
// unfinished event or line began) and Decoder.Truncated reports true.
// Consumers must check Truncated before interpreting an event.
//
// # Limits
//
// There is no 64 KiB line limit. A single line, and the joined data of one
// event, may not exceed Options.MaxEventBytes (default 32 MiB); a larger one
// fails the run with a *TooLargeError (errors.Is(err, ErrTooLarge)) naming the
// byte offset where the event started.
package sse
