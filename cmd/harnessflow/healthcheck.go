package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/harnessflow/harnessflow/server"
)

// healthcheckSynopsis is the short usage of healthcheck.
const healthcheckSynopsis = "Usage: harnessflow healthcheck [--url http://127.0.0.1:8787/healthz] [--timeout 5s]"

// runHealthcheck implements `harnessflow healthcheck`: one GET of a running
// serve's /healthz, exit 0 when it answers 200 and 1 otherwise. It is the
// probe of images that hold nothing but this binary (no shell, no curl):
// the Containerfile's HEALTHCHECK runs it (docs/deploy.md). It never goes
// through HTTP_PROXY and never follows a redirect: the answer must come
// from the address probed.
func runHealthcheck(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rawURL := fs.String("url", "http://"+server.DefaultAddr+"/healthz", "the `URL` to probe (http or https)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after `D` (connect, headers and body together)")
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, healthcheckSynopsis)
		fmt.Fprintln(w, "Sends one GET to a running serve's /healthz and exits 0 when it answers 200, 1 otherwise")
		fmt.Fprintln(w, "(not reachable, another status, a redirect, too slow), with the reason on stderr.")
		fmt.Fprintln(w, "It is the HEALTHCHECK of the container image, which has no shell or curl (docs/deploy.md).")
		fs.PrintDefaults()
	}
	if code, ok := parseFlags(fs, healthcheckSynopsis, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "healthcheck", healthcheckSynopsis, "%s", extraArgs(fs, 0))
	}
	u, err := url.Parse(*rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError(stderr, "healthcheck", healthcheckSynopsis, "--url: want an http:// or https:// URL with a host, got %q", server.RedactURL(*rawURL))
	}
	if *timeout <= 0 {
		return usageError(stderr, "healthcheck", healthcheckSynopsis, "--timeout: want more than 0, got %s", *timeout)
	}
	shown := server.RedactURL(*rawURL)
	status, err := probe(ctx, u.String(), *timeout)
	if err != nil {
		return fail(stderr, "healthcheck", exitError, "%s: %v", shown, err)
	}
	fmt.Fprintf(stdout, "harnessflow healthcheck: %s: %d %s\n", shown, status, http.StatusText(status))
	return exitOK
}

// probe GETs target once and returns its status when that is 200; any other
// answer, or none within timeout, is an error saying which.
func probe(ctx context.Context, target string, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	transport := &http.Transport{
		Proxy:             nil, // the address probed, never HTTP_PROXY's (which Go skips for loopback only)
		DisableKeepAlives: true,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a redirect is an answer, and not a healthy one
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, fmt.Errorf("building the request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, fmt.Errorf("no answer within %s", timeout)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			return 0, ue.Err // *url.Error repeats the method and URL the caller prints
		}
		return 0, err
	}
	defer resp.Body.Close()
	// The body is read (a little of it) so that a server that answers
	// the headers and then stalls counts as too slow.
	head, err := io.ReadAll(io.LimitReader(resp.Body, 256))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return 0, fmt.Errorf("status %d, then no body within %s", resp.StatusCode, timeout)
		}
		return 0, fmt.Errorf("status %d, then reading the body: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK {
		msg := fmt.Sprintf("status %d, want 200", resp.StatusCode)
		if loc := resp.Header.Get("Location"); loc != "" {
			msg += " (a redirect, not followed)"
		} else if len(head) > 0 {
			msg += fmt.Sprintf(" (body starts %q)", head)
		}
		return 0, errors.New(msg)
	}
	return resp.StatusCode, nil
}
