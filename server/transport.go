package server

import "net/http"

// DefaultMaxIdleUpstreamConns is the default of Config.MaxIdleUpstreamConns.
// An idle connection costs a few kilobytes and two goroutines, and the
// transport closes it after 90 s unused.
const DefaultMaxIdleUpstreamConns = 4096

// upstreamWriteBuffer is the size of the transport's per-connection write
// buffer. A request is written once — its headers and the start of its body
// fill the buffer, the rest of the body goes to the socket directly — so a
// small buffer costs no extra write for small requests and at most one for
// big ones, and saves 3 KB on every open or idle upstream connection.
const upstreamWriteBuffer = 1 << 10

// upstreamTransport is the transport of the server's own upstream client:
// Go's default one, keeping up to idle idle connections to the upstream
// (0: DefaultMaxIdleUpstreamConns) instead of 2, so that requests under
// load reuse the connections of the streams that ended instead of dialing,
// with a small write buffer (upstreamWriteBuffer).
func upstreamTransport(idle int) *http.Transport {
	if idle <= 0 {
		idle = DefaultMaxIdleUpstreamConns
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = idle
	t.MaxIdleConnsPerHost = idle
	t.WriteBufferSize = upstreamWriteBuffer
	return t
}

// upstreamBase is what a request needs of the configuration, computed once
// by New (the configuration does not change after it): Config.Check's
// verdict and the upstream's base URL without a trailing slash.
type upstreamBase struct {
	base string
	err  error
}

// checkUpstream checks cfg and parses its upstream URL.
func checkUpstream(cfg Config) upstreamBase {
	if err := cfg.Check(); err != nil || cfg.Routes != nil {
		return upstreamBase{err: err} // each routed upstream's URL was checked with its file
	}
	base, err := parseBase(cfg.Upstream)
	return upstreamBase{base: base, err: err}
}
