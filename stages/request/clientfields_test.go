package request

import (
	"strconv"
	"strings"
)

// clientDirective reads a golden archive's client-field directive k: v
// into f (see the golden format in golden_test.go); other keys are
// ignored.
func clientDirective(f *ClientFields, k, v string) {
	switch k {
	case "client-fields":
		f.Send = v == "send"
	case "token-field":
		f.TokenField = TokenField(v)
	case "model-max-output-tokens":
		f.MaxOutputTokens, _ = strconv.ParseInt(v, 10, 64)
	case "prompt-cache-key":
		f.PromptCacheKey = v == "true"
	case "metadata":
		f.Metadata = v == "true"
	case "unsupported":
		f.Unsupported = strings.Split(v, ",")
	}
}
