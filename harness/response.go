package harness

import (
	"fmt"

	"github.com/harnessflow/harnessflow/pipeline"
)

// ProtocolGraph builds the protocol layer of the response direction for a
// wire: upstream bytes → ResponseEvents, with no harness postprocessing.
func ProtocolGraph(wire Wire, opts ResponseOptions) (*pipeline.Graph, error) {
	return nil, fmt.Errorf("harness: response graph for wire %q: protocol stages not assembled yet", wire)
}
