package anthropic

import (
	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// UnmarshalJSON implements json.Unmarshaler: a string, an array of blocks, or
// null (absent).
func (c *Content) UnmarshalJSON(data []byte) error {
	text, blocks, shape, err := jsonx.StringOrArray[Block](data, "anthropic: content")
	if err != nil {
		return err
	}
	switch shape {
	case jsonx.ShapeString:
		*c = Text(text)
	case jsonx.ShapeArray:
		*c = Blocks(blocks...)
	default:
		*c = Content{}
	}
	return nil
}
