package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
)

// Client authentication (Config.ClientKeys).
//
// With client keys configured, every /v1/responses request (and the
// harness routes) must carry "Authorization: Bearer KEY" with one of them,
// else it gets HTTP 401 with an OpenAI-style error body. A presented key is
// hashed (SHA-256) and compared with every accepted key's hash in constant
// time, so neither the comparison's time nor the keys' lengths tell a
// caller how close a guess came. The key is the proxy's credential: it is
// never sent upstream (the upstream gets Config.APIKey, or no
// Authorization), and neither keys nor hashes are logged. GET /healthz and
// GET /metrics stay open: they carry no content.

// MinClientKeyBytes is the shortest client key accepted: shorter keys are
// guessable.
const MinClientKeyBytes = 16

// ParseClientKeys splits a list of client keys separated by commas or
// newlines (an environment variable's or a file's contents), dropping
// surrounding space, empty entries and lines starting with "#". It fails on
// an empty list and on a key shorter than MinClientKeyBytes; the error never
// quotes a key.
func ParseClientKeys(text string) ([]string, error) {
	var keys []string
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for k := range strings.SplitSeq(line, ",") {
			k = strings.TrimSpace(k)
			if k == "" {
				continue
			}
			if len(k) < MinClientKeyBytes {
				return nil, fmt.Errorf("server: client key %d is %d bytes long: want at least %d", len(keys)+1, len(k), MinClientKeyBytes)
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("server: no client keys (want keys separated by commas or newlines)")
	}
	return keys, nil
}

// keyring holds the hashes of the accepted client keys.
type keyring [][sha256.Size]byte

func newKeyring(keys []string) *keyring {
	var kr keyring
	for _, k := range keys {
		if k != "" {
			kr = append(kr, sha256.Sum256([]byte(k)))
		}
	}
	return &kr
}

// accepts reports whether key is one of the accepted keys. It compares
// key's hash with every accepted hash, whatever matched before.
func (kr keyring) accepts(key string) bool {
	h := sha256.Sum256([]byte(key))
	ok := 0
	for i := range kr {
		ok |= subtle.ConstantTimeCompare(h[:], kr[i][:])
	}
	return ok == 1
}

// bearer returns the token of an "Authorization: Bearer TOKEN" header.
func bearer(r *http.Request) (string, bool) {
	auth := r.Header.Get("Authorization")
	if len(auth) < len("Bearer ") || !strings.EqualFold(auth[:len("Bearer ")], "Bearer ") {
		return "", false
	}
	token := strings.TrimSpace(auth[len("Bearer "):])
	return token, token != ""
}

// authenticate wraps a handler of the proxied routes with the client key
// check, made on the request's headers before a byte of its body is read:
// a refused request gets HTTP 401 with "Connection: close", so the server
// neither waits for nor drains the rest of a body nobody will use (a slow
// keyless body would otherwise hold its connection). The keys in force are
// those of the last SetClientKeys; without any the request goes on.
func (s *Server) authenticate(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if keys := s.keys.Load(); len(*keys) > 0 && s.refuse(w, r, keys) {
			return
		}
		h(w, r)
	}
}

// refuse answers HTTP 401 to a request without a key of keys and reports
// whether it did. (Out of authenticate's closure, whose frame is on the
// stack of every stream.)
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, keys *keyring) bool {
	key, ok := bearer(r)
	if ok && keys.accepts(key) {
		return false
	}
	reason, msg := authInvalid, "harnessflow: the API key is not one this proxy accepts"
	if !ok {
		reason, msg = authMissing, `harnessflow: missing API key: send "Authorization: Bearer KEY" with a key this proxy accepts`
	}
	s.proxyMetrics.clientAuthFailure(reason)
	s.log.LogAttrs(r.Context(), slog.LevelWarn, "harnessflow request refused: client key "+reason,
		slog.String("method", r.Method), slog.String("path", r.URL.Path))
	w.Header().Set("WWW-Authenticate", `Bearer realm="harnessflow"`)
	w.Header().Set("Connection", "close")
	s.answer(w, nil, failure(http.StatusUnauthorized, "invalid_request_error", "invalid_api_key", msg, "", nil))
	abandonBody(w)
	return true
}

// SetClientKeys replaces the accepted client keys: requests that arrive
// afterwards are checked against keys, streams in flight go on. Keys can be
// changed, or required where none were, but not all removed: without keys
// the client's own Authorization goes upstream, and clients still sending
// a proxy key would send it there — that takes a restart.
func (s *Server) SetClientKeys(keys []string) error {
	for i, k := range keys {
		if len(k) < MinClientKeyBytes {
			return fmt.Errorf("server: client key %d is %d bytes long: want at least %d", i+1, len(k), MinClientKeyBytes)
		}
	}
	kr := newKeyring(keys)
	if len(*kr) == 0 && s.requiresKeys() {
		return errors.New("server: removing every client key takes a restart (clients sending a proxy key would have it passed upstream)")
	}
	s.keys.Store(kr)
	return nil
}

// requiresKeys reports whether client keys are in force.
func (s *Server) requiresKeys() bool { return len(*s.keys.Load()) > 0 }

// clientCredentials returns the client's Authorization and x-api-key
// headers to pass upstream when the proxy has no API key of its own: none
// when client keys are configured (the client's key is the proxy's
// credential, not the upstream's).
func (s *Server) clientCredentials(r *http.Request) (auth, apiKey string) {
	if s.requiresKeys() {
		return "", ""
	}
	return r.Header.Get("Authorization"), r.Header.Get("x-api-key")
}

// OpenRelayError is the refusal to serve a non-loopback address while the
// proxy spends its own upstream key (Config.APIKey) for any caller (no
// Config.ClientKeys) — an open relay of that key — without
// Config.InsecureOpenRelay.
type OpenRelayError struct {
	// Addr is the address the proxy would have served.
	Addr net.Addr
}

// Error says why and what to do instead.
func (e *OpenRelayError) Error() string {
	return fmt.Sprintf("server: refusing to serve %s, which is not a loopback address, with the proxy's own upstream API key "+
		"and no client keys: anyone who reaches it could spend that key. Configure client keys, listen on a loopback address, "+
		"or allow it explicitly (insecure open relay)", e.Addr)
}

// CheckAddr returns an *OpenRelayError when serving addr would make the
// proxy an open relay of its upstream key (Serve refuses such a listener
// too); run it before listening, on the resolved address to listen on.
func (c Config) CheckAddr(addr net.Addr) error {
	if !c.spendsKey() || len(*newKeyring(c.ClientKeys)) > 0 || c.InsecureOpenRelay || IsLoopback(addr) {
		return nil
	}
	return &OpenRelayError{Addr: addr}
}

// openRelay notes that the server serves a non-loopback address (for
// checkReload) and, when it would spend its own upstream key there for any
// caller (CheckAddr, with the client keys in force now), answers HTTP 403
// and reports true. Serve refuses such a listener before a request
// arrives; this is the same protection for a Handler served by the
// caller's own http.Server.
func (s *Server) openRelay(w http.ResponseWriter, r *http.Request, addr net.Addr) bool {
	if !s.exposed.Load() {
		s.exposed.Store(true)
	}
	if s.requiresKeys() || s.cfg.InsecureOpenRelay || !s.cfg.spendsKey() {
		return false
	}
	err := &OpenRelayError{Addr: addr}
	s.log.LogAttrs(r.Context(), slog.LevelWarn, "harnessflow request refused: open relay",
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("addr", addr.String()))
	w.Header().Set("Connection", "close")
	s.answer(w, nil, failure(http.StatusForbidden, "invalid_request_error", "open_relay", "harnessflow: "+strings.TrimPrefix(err.Error(), "server: "), "", err))
	abandonBody(w)
	return true
}

// IsLoopback reports whether addr is a TCP address on a loopback IP (an
// unspecified IP such as 0.0.0.0 listens on every interface: not loopback).
// Addresses of other networks (unix sockets) count as loopback: only
// local processes reach them.
func IsLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return addr.Network() != "tcp" && addr.Network() != "udp"
	}
	return tcp.IP.IsLoopback()
}
