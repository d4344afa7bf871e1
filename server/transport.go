package server

import "net/http"

// DefaultMaxIdleUpstreamConns is the default of Config.MaxIdleUpstreamConns.
// An idle connection costs a few kilobytes and two goroutines, and the
// transport closes it after 90 s unused.
const DefaultMaxIdleUpstreamConns = 4096

// upstreamTransport is the transport of the server's own upstream client:
// Go's default one, keeping up to idle idle connections to the upstream
// (0: DefaultMaxIdleUpstreamConns) instead of 2, so that requests under
// load reuse the connections of the streams that ended instead of dialing.
func upstreamTransport(idle int) *http.Transport {
	if idle <= 0 {
		idle = DefaultMaxIdleUpstreamConns
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = idle
	t.MaxIdleConnsPerHost = idle
	return t
}
