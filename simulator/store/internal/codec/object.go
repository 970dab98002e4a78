package codec

import (
	"encoding/json"
	"fmt"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// DecodeObject decodes an object's JSON (what the PostgreSQL store wrote before its schema
// version 7, and the SQLite store before its version 10).
func DecodeObject(data []byte) (*store.Object, error) {
	var o store.Object
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	return &o, nil
}

// PackWrites packs the objects a batch stores (nil for removals), for a table's entries.
func PackWrites(b store.Batch) ([][]byte, error) {
	packs := make([][]byte, len(b.Writes))
	var scratch []byte
	for i, w := range b.Writes {
		if w.Remove {
			continue
		}
		var err error
		if scratch, err = PackObject(scratch[:0], w.Object); err != nil {
			return nil, err
		}
		// Each its own exact allocation: the table holds it for as long as the object lives.
		packs[i] = append([]byte(nil), scratch...)
	}
	return packs, nil
}
