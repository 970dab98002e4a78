package codec

import (
	"encoding/json"
	"fmt"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// DecodeObject decodes an object's JSON.
func DecodeObject(data []byte) (*store.Object, error) {
	var o store.Object
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, fmt.Errorf("decode object: %w", err)
	}
	return &o, nil
}

// DecodeAll decodes objects' JSON (outside a store's lock).
func DecodeAll(datas [][]byte) ([]*store.Object, error) {
	out := make([]*store.Object, len(datas))
	for i, d := range datas {
		o, err := DecodeObject(d)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// EncodeWrites encodes the objects a batch stores (nil for removals).
func EncodeWrites(b store.Batch) ([][]byte, error) {
	datas := make([][]byte, len(b.Writes))
	for i, w := range b.Writes {
		if w.Remove {
			continue
		}
		d, err := json.Marshal(w.Object)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", w.Object.ID, err)
		}
		datas[i] = d
	}
	return datas, nil
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
