// Command codecgen writes the JSON codecs of the wire packages from their
// field tables (tables.go): the encoder methods, MarshalJSON and
// UnmarshalJSON of every struct type, on the internal/jsonx encoder and
// field reader, with no reflection at run time; and the codecs of package
// protocol's response items (items.go). It runs by `go generate` in
// wire/chat, wire/anthropic and protocol; its test fails when a committed
// file differs from what it writes.
//
//	codecgen -pkg chat [-out codec_gen.go]
package main

import (
	"flag"
	"fmt"
	"os"
)

// tables are the packages codecgen knows, by name.
var tables = map[string]*pkg{
	"chat":      &chatTable,
	"anthropic": &anthropicTable,
}

// generateFor returns the generated file of a package: chat, anthropic or
// protocol (its response items).
func generateFor(name string) ([]byte, error) {
	if name == "protocol" {
		return generateItems(protocolItems)
	}
	p, ok := tables[name]
	if !ok {
		return nil, fmt.Errorf("unknown -pkg %q (want chat, anthropic or protocol)", name)
	}
	return generate(p)
}

func main() {
	name := flag.String("pkg", "", "the package whose codecs to write: chat, anthropic or protocol")
	out := flag.String("out", "codec_gen.go", "the file to write")
	flag.Parse()
	src, err := generateFor(*name)
	if err != nil {
		fmt.Fprintln(os.Stderr, "codecgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "codecgen:", err)
		os.Exit(1)
	}
}
