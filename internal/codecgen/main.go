// Command codecgen writes the JSON codecs of the wire packages from their
// field tables (tables.go): the encoder methods, MarshalJSON and
// UnmarshalJSON of every struct type, on the internal/jsonx encoder and
// field reader, with no reflection at run time. It runs by `go generate` in
// wire/chat and wire/anthropic; its test fails when a committed
// codec_gen.go differs from what it writes.
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

func main() {
	name := flag.String("pkg", "", "the package whose codecs to write: chat or anthropic")
	out := flag.String("out", "codec_gen.go", "the file to write")
	flag.Parse()
	p, ok := tables[*name]
	if !ok {
		fmt.Fprintf(os.Stderr, "codecgen: unknown -pkg %q (want chat or anthropic)\n", *name)
		os.Exit(2)
	}
	src, err := generate(p)
	if err != nil {
		fmt.Fprintln(os.Stderr, "codecgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "codecgen:", err)
		os.Exit(1)
	}
}
