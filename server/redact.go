package server

import (
	"errors"
	"net/url"
	"strings"
)

// redacted replaces a credential in a URL that is printed.
const redacted = "xxxxx"

// secretParams are query parameters that carry credentials in upstream URLs
// (Gemini's key=, signed URLs' sig=, tokens): their values are redacted.
var secretParams = []string{"key", "api_key", "apikey", "api-key", "token", "access_token", "auth", "sig", "signature", "secret", "password", "code"}

// RedactURL returns rawURL fit to print: the password of its userinfo and
// the values of credential-like query parameters (key, api_key, token,
// sig, ...) replaced by "xxxxx". A URL that does not parse loses
// everything between "://" and the last "@" before the host when it has
// one, and its whole query.
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return redactUnparsed(rawURL)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redacted)
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		changed := false
		for name, vals := range q {
			if isSecretParam(name) {
				for i := range vals {
					vals[i] = redacted
				}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

func isSecretParam(name string) bool {
	name = strings.ToLower(name)
	for _, p := range secretParams {
		if name == p || strings.HasSuffix(name, "_"+p) || strings.HasSuffix(name, "-"+p) {
			return true
		}
	}
	return false
}

func redactUnparsed(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	host := rest
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		host = rest[:i]
	}
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		return scheme + "://" + redacted + rest[at:]
	}
	return s
}

// redactURLErr returns err without the URL a *url.Error quotes (it may hold
// credentials).
func redactURLErr(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok && ue.Err != nil {
		return ue.Err
	}
	return err
}

// redactKey replaces the proxy's own upstream keys (Config.APIKey, the
// routing config's) in text
// that goes to a client or a log: some upstreams quote the key they were
// sent in their error messages.
func (s *Server) redactKey(text string) string {
	if s.cfg.Routes != nil { // every upstream's key of the routing config
		for _, u := range s.cfg.Routes.Config().Upstreams {
			if len(u.APIKey) >= 8 {
				text = strings.ReplaceAll(text, u.APIKey, redacted)
			}
		}
	}
	if len(s.cfg.APIKey) < 8 {
		return text // too short to tell from ordinary text
	}
	return strings.ReplaceAll(text, s.cfg.APIKey, redacted)
}
