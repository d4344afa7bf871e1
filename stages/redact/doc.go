// Package redact replaces secrets in text with [REDACTED:<kind>], in both
// directions of a harness, including secrets split across stream deltas.
//
// A Redactor (New, Default) is a compiled, immutable set of detectors. Use
//
//   - Node (the redact.response stage) in a response graph, after the
//     protocol nodes: it redacts text, reasoning and tool-input deltas as
//     they stream, and the items of output_item.added/done events whole;
//   - RequestNode (the redact.request stage) in a request graph, after
//     request.encode: it redacts every string value of the encoded upstream
//     body (Redactor.JSON), whatever the wire and the harness put there;
//     Redactor.Request, Prompt and Items redact the engine's request types
//     directly;
//   - Redactor.String for a whole text, and Stream for one text that
//     arrives in pieces.
//
// # Detectors
//
// A secret must stand on its own: the byte before it may not continue it
// (so "task-…" never starts an sk- key), and fixed-length secrets must end
// where they end.
//
//	kind            matches                                              holds at most
//	api_key         sk-[A-Za-z0-9_-]{20,} with a letter and a digit      66 bytes
//	                among the first 64 bytes after "sk-"
//	aws_access_key  (AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16},       20 bytes
//	                exactly 20 bytes between non-alphanumerics
//	github_token    gh[pousr]_[A-Za-z0-9]{36,} or                         39 bytes
//	                github_pat_[A-Za-z0-9_]{22,}
//	bearer_token    "Bearer" (any case), 1–4 spaces/tabs, a token of      73 bytes
//	                [A-Za-z0-9._~+/-]{16,} with a letter and a digit in
//	                its first 64 bytes, then '=' padding; "Bearer " is kept
//	private_key     "-----BEGIN <label>-----" where the label ends in      64 bytes
//	                "PRIVATE KEY" (or "PRIVATE KEY BLOCK"), through the
//	                matching "-----END …-----" line
//	user patterns   Pattern: a Go regexp with a bound MaxLen              MaxLen bytes
//
// Token secrets (api_key, github_token, bearer_token) are confirmed as soon
// as the bytes above are seen: the marker is released at once and the rest
// of the token is dropped as it arrives, however long it is. A private key
// is confirmed at its BEGIN line; everything up to its END line is dropped
// without being held, up to Config.MaxPrivateKeyBytes (16 KiB by default),
// after which the block is taken to end at the next whitespace.
//
// # Hold-back rule
//
// A Stream releases every byte that can no longer be part of a secret.
// After each push it holds back exactly the shortest tail that could still
// be the start of a secret: the tail beginning at the leftmost position
// where some detector, given the text so far, can neither rule a secret out
// nor confirm one. Such a tail is always a proper prefix of a possible
// secret, so it is never longer than the detector's bound in the table, and
// Redactor.MaxHold (the largest bound of its detectors) bounds every hold.
// Flush, and the end of a delta channel in the stage, release the held text
// (redacted as the end of the text). Pushing a text in any split produces
// the same output, concatenated, as Redactor.String of the whole text.
//
// For a user pattern the bound is its MaxLen: derived from the expression
// when it is bounded (`TCK-[0-9]{6}` → 10), otherwise Pattern.MaxLen, else
// DefaultPatternMaxLen (256). A pattern's candidate start is held only while
// the text after it can still extend to a match (checked by running the
// expression's automaton; a literal start such as `password=` rules out
// most text at its first byte) and it is decided as soon as no match can
// grow any further, or MaxLen+1 bytes are present. A match is looked for
// within those MaxLen+1 bytes.
//
// # Limits
//
// Detectors are deliberately conservative: prose like "the bearer of",
// "sk-learn", "-----BEGIN CERTIFICATE-----" or "AKIA" alone is kept. A
// bearer token includes a trailing '.' (JWTs contain dots). JSON object keys
// are not redacted, only string values. A user pattern without a literal
// or rare first byte (say `\S{20,}`) makes every position a candidate, which
// costs time and holds text back up to its MaxLen.
package redact
