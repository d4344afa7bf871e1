package server

import (
	"fmt"
	"net/http"
)

// No redirects from model servers (README "Shared deployments").
//
// A model server's API never redirects a POST. Following one would let a
// compromised or misconfigured upstream choose where the request goes —
// and with it the body and, since Go's client drops only Authorization
// across hosts, a custom credential header such as x-api-key (or, for a
// redirect to another port of the same host, the bearer key too). Every
// client the server sends upstream requests with refuses to follow: a 3xx
// comes back as it is, and do turns it into a *RedirectError before
// anything reads its body.

// refuseRedirect is the CheckRedirect of every upstream client: the 3xx
// response is returned to the caller, nothing is sent to its Location.
func refuseRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// withoutRedirects returns a shallow copy of c that follows no redirects
// (the copy shares c's transport, cookie jar and timeout).
func withoutRedirects(c *http.Client) *http.Client {
	cp := *c
	cp.CheckRedirect = refuseRedirect
	return &cp
}

// RedirectError is an upstream's answer with a redirect status, which the
// proxy does not follow: the client gets HTTP 502 (code upstream_redirect)
// and, with a routing configuration, the next upstream is tried.
type RedirectError struct {
	// Status is the upstream's HTTP status (300–399).
	Status int
	// Target is the scheme and host of the Location header ("" when it had
	// none or it did not parse) — never its path or query, which may carry
	// tokens.
	Target string
}

// Error says what came and why it was not followed.
func (e *RedirectError) Error() string {
	to := "with no usable Location"
	if e.Target != "" {
		to = "to " + e.Target
	}
	return fmt.Sprintf("the upstream answered HTTP %d redirecting %s; harnessflow does not follow a model server's redirects "+
		"(its request and credentials would go where the upstream chose): point the upstream URL at the final address", e.Status, to)
}

// redirectOf returns the *RedirectError of a 3xx response, nil for any
// other status.
func redirectOf(resp *http.Response) *RedirectError {
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return nil
	}
	e := &RedirectError{Status: resp.StatusCode}
	if loc, err := resp.Location(); err == nil && loc.Host != "" {
		e.Target = loc.Scheme + "://" + loc.Host
	}
	return e
}
