// Package upstream is the front door for sending a planned turn to a model
// server and reading its answer as engine events: a [Client] builds the
// upstream HTTP request of a turn from its wire's codec (path, credentials,
// the wire's headers, then the harness's, then the caller's), sends it
// without following redirects, and runs the turn's response graph over the
// answer. The proxy builds its upstream requests with [Client.NewRequest],
// so a program gets the request `serve` sends (docs/architecture.md#wire-codecs).
package upstream

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/harnessflow/harnessflow/codec"
	"github.com/harnessflow/harnessflow/harness"
	"github.com/harnessflow/harnessflow/pipeline"
	"github.com/harnessflow/harnessflow/protocol"
	"github.com/harnessflow/harnessflow/sources"
	"github.com/harnessflow/harnessflow/stages/request"
	"github.com/harnessflow/harnessflow/wire"
)

// Client sends turns to one model server.
type Client struct {
	// HTTP sends the requests; nil uses one that follows no redirects
	// (a redirect would carry the key to another host).
	HTTP *http.Client
	// Base is the server's base URL, e.g. "http://127.0.0.1:8000/v1".
	Base string
	// Wire is the server's wire ("" means chat).
	Wire wire.Wire
	// Auth is the Authorization to send ("Bearer KEY"); a wire that reads
	// a bare key from its own header gets the key there.
	Auth string
	// ClientKey is a bare key for such a wire when Auth carries none.
	ClientKey string
	// Headers are set last, over the wire's and the harness's.
	Headers map[string]string
}

// ErrStatus is wrapped by [Client.Send]'s error for an answer that is not
// 2xx; the error's text quotes the status and the start of the body.
var ErrStatus = errors.New("upstream: answer is not 2xx")

func (c *Client) wire() wire.Wire {
	if c.Wire == "" {
		return wire.Chat
	}
	return c.Wire
}

// NewRequest builds the POST of body (the shaped request's body, or its
// title request's) to the shaped request's path and query on c.Base, with
// the wire's credentials and headers, then the shaped request's (never
// credentials, Host, Content-Length or Accept-Encoding), then c.Headers;
// stream says the body asks for a stream. The request asks for gzip
// itself, so that a caller bounding the answer sees it compressed.
func (c *Client) NewRequest(ctx context.Context, shaped request.Shaped, body []byte, stream bool) (*http.Request, error) {
	wc, ok := codec.Lookup(c.wire())
	if !ok {
		return nil, fmt.Errorf("upstream: request: no codec for wire %q", c.wire())
	}
	path := shaped.Path
	if path == "" {
		path = wc.Path
	}
	target := c.Base + path
	if len(shaped.Query) > 0 {
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("upstream: request: %w", err)
		}
		q := u.Query()
		for k, v := range shaped.Query {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		target = u.String()
	}
	up, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("upstream: request: %w", err)
	}
	h := up.Header
	h.Set("Content-Type", "application/json")
	if stream {
		h.Set("Accept", "text/event-stream")
	} else {
		h.Set("Accept", "application/json")
	}
	h.Set("User-Agent", "harnessflow")
	h.Set("Accept-Encoding", "gzip")
	wc.SetKey(h, c.Auth, c.ClientKey)
	wc.SetHeaders(h)
	// The harness's headers (beta flags, versions, its user agent) come
	// after the wire's; the credentials are the caller's to set.
	for k, v := range shaped.Headers {
		switch http.CanonicalHeaderKey(k) {
		case "Authorization", "X-Api-Key", "Content-Length", "Host", "Accept-Encoding":
			continue
		}
		h.Set(k, v)
	}
	for k, v := range c.Headers {
		h.Set(k, v)
	}
	return up, nil
}

func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

var noRedirects = &http.Client{CheckRedirect: refuseRedirect}

// Send sends the exchange's shaped request and returns the 2xx answer,
// with ex told what it answered with (Exchange.Answered); the caller
// closes its body. Another status is an error wrapping ErrStatus.
func (c *Client) Send(ctx context.Context, ex *harness.Exchange) (*http.Response, error) {
	if ex == nil || ex.Turn == nil {
		return nil, errors.New("upstream: send: no planned turn")
	}
	up, err := c.NewRequest(ctx, ex.Turn.Shaped, ex.Turn.Shaped.Body, ex.AsksStream())
	if err != nil {
		return nil, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = noRedirects
	}
	resp, err := hc.Do(up)
	if err != nil {
		return nil, fmt.Errorf("upstream: send: %w", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer resp.Body.Close()
		start, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("%w: %s: %q", ErrStatus, resp.Status, start)
	}
	ex.Answered(resp.Header.Get("Content-Type"))
	return resp, nil
}

// Stream sends the exchange's request and runs its response graph (with
// edits, pipeline.Edit: a stage inserted by name) over the answer into sink: the turn's engine events, as the proxy
// gets them.
func (c *Client) Stream(ctx context.Context, ex *harness.Exchange, sink pipeline.Sink[protocol.ResponseEvent], edits ...pipeline.Edit) error {
	resp, err := c.Send(ctx, ex)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" { // NewRequest asks for it
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return fmt.Errorf("upstream: stream: gzip answer: %w", err)
		}
		defer zr.Close()
		body = zr
	}
	g, err := ex.Graph(edits...)
	if err != nil {
		return fmt.Errorf("upstream: stream: %w", err)
	}
	if err := pipeline.Run(ctx, g, sources.Reader(body), sink); err != nil {
		return fmt.Errorf("upstream: stream: %w", err)
	}
	return nil
}
