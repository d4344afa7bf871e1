package chat

import (
	"github.com/harnessflow/harnessflow/internal/jsonx"
)

// UnmarshalJSON implements json.Unmarshaler: a string, an array of parts, or
// null (absent).
func (c *Content) UnmarshalJSON(data []byte) error {
	text, parts, shape, err := jsonx.StringOrArray[Part](data, "chat: content")
	if err != nil {
		return err
	}
	switch shape {
	case jsonx.ShapeString:
		*c = Text(text)
	case jsonx.ShapeArray:
		*c = Parts(parts...)
	default:
		*c = Content{}
	}
	return nil
}
