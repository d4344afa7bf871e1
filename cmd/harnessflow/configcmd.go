package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/harnessflow/harnessflow/harness/all"
	"github.com/harnessflow/harnessflow/serveconfig"
	"github.com/harnessflow/harnessflow/server"
)

// configSynopsis is the short usage of config.
const configSynopsis = "Usage: harnessflow config check FILE"

// runConfig implements `harnessflow config check FILE`: it reads and
// validates a serve configuration file (docs/serve-config.md) as `serve
// --config` would — environment variables and key files included, the
// store's URL parsed but not connected to — and prints what it routes
// where. Every problem is printed as FILE:LINE: message; the exit status
// is 2 when there is one.
func runConfig(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, configSynopsis)
		fmt.Fprintln(w, "Validates a `serve --config` file: every problem is printed as FILE:LINE: message; a valid file's")
		fmt.Fprintln(w, "upstreams and model routes are listed. Keys are never printed.")
	}
	if code, ok := parseFlags(fs, configSynopsis, args); !ok {
		return code
	}
	if fs.NArg() == 0 || fs.Arg(0) != "check" {
		return usageError(stderr, "config", configSynopsis, "want the subcommand check")
	}
	if fs.NArg() != 2 {
		return usageError(stderr, "config", configSynopsis, "config check takes one FILE")
	}
	c, err := loadServeConfig(fs.Arg(1))
	if err == nil {
		err = checkRelay(c)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	describeConfig(stdout, c)
	return exitOK
}

// loadServeConfig reads a serve configuration file and checks what the
// package serveconfig leaves to the command (the store's syntax).
func loadServeConfig(path string) (*serveconfig.Config, error) {
	c, err := serveconfig.Load(path, serveconfig.Options{Registry: all.Registry()})
	if err != nil {
		return nil, err
	}
	st, err := openStore(c.Store)
	if err != nil {
		return nil, &serveconfig.Error{File: path, Msg: "store: " + err.Error()}
	}
	st.close()
	return c, nil
}

// checkRelay refuses, as serve would at start, a file whose listen
// addresses include a non-loopback one while an upstream has a key of its
// own and clients need none.
func checkRelay(c *serveconfig.Config) error {
	cfg := server.Config{Registry: all.Registry(), Routes: serveconfig.NewHolder(c, serveconfig.Options{Registry: all.Registry()}), ClientKeys: c.ClientKeys, InsecureOpenRelay: c.InsecureOpenRelay}
	for _, a := range c.Listen {
		addr, err := net.ResolveTCPAddr("tcp", a)
		if err != nil {
			return &serveconfig.Error{File: c.File, Msg: fmt.Sprintf("listen %q: %v", a, err)}
		}
		if err := cfg.CheckAddr(addr); err != nil {
			return &serveconfig.Error{File: c.File, Msg: err.Error() + " (set client_keys or insecure_open_relay)"}
		}
	}
	return nil
}

// describeConfig prints a valid configuration's upstreams and routes.
func describeConfig(w io.Writer, c *serveconfig.Config) {
	fmt.Fprintf(w, "%s: ok: %d upstream(s), %d model entr", c.File, len(c.Upstreams), len(c.Models))
	if len(c.Models) == 1 {
		fmt.Fprintln(w, "y")
	} else {
		fmt.Fprintln(w, "ies")
	}
	for _, u := range c.Upstreams {
		key := "the client's Authorization"
		if u.APIKey != "" {
			key = "its own key"
		}
		fmt.Fprintf(w, "  upstream %s: credentials: %s\n", u, key)
	}
	for _, m := range c.Models {
		var to []string
		for _, u := range m.Upstreams {
			name := m.UpstreamModels[u.Name]
			if name == "" {
				name = m.UpstreamModel
			}
			if name != "" {
				to = append(to, fmt.Sprintf("%s as %q", u.Name, name))
			} else {
				to = append(to, u.Name)
			}
		}
		h := m.Harness
		if h == "" {
			h = "native"
		}
		when := ""
		switch m.When {
		case serveconfig.WhenThinking:
			when = ", thinking requests"
		case serveconfig.WhenLongContext:
			when = fmt.Sprintf(", requests of %d input tokens or more (estimated)", m.LongContextTokens)
		}
		fmt.Fprintf(w, "  model %q → %s (harness %s%s)\n", m.Name, strings.Join(to, ", then "), h, when)
	}
	if c.DefaultModel != "" {
		fmt.Fprintf(w, "  a request without a model: %q\n", c.DefaultModel)
	}
}
