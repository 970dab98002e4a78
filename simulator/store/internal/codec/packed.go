package codec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/store"
)

// The packed form of an object is what the in-memory table of the memory and SQLite stores
// holds for it (and, from its schema version 10, what the SQLite store's journal and file
// hold; from its schema version 7, the PostgreSQL store's data column): 100k objects are held
// in memory for as long as they live, and their JSON repeats what the table's columns hold and
// spells every time as 30-odd characters. The packed form leaves out the columns (Columns),
// keeps the name and the times in binary, and the rest (spec, status, operation, ...) as
// JSON, only when set: a cloudspace at rest packs into some 40 bytes where its JSON takes 330. It decodes to
// the object its JSON decodes to (numbers in spec and status are float64, times lose their
// monotonic reading), so a store serves the same objects either way.

// packVersion starts every packed object.
const packVersion = 1

// Flags of a packed object: which of the maps and slices a JSON round trip tells apart as nil
// and empty are set, and whether a JSON tail follows.
const (
	packSpec = 1 << iota
	packDefaulted
	packStatus
	packTail
)

// Columns are the fields of an object its table entry holds as columns, not in its packed form.
type Columns struct {
	ID, Tenant, Kind, ParentID, State string
	Version                           int64
}

// packedTail is the part of an object the packed form keeps as JSON: set only when not empty.
type packedTail struct {
	Spec        map[string]any    `json:"spec,omitempty"`
	Defaulted   []string          `json:"defaulted,omitempty"`
	Status      map[string]any    `json:"status,omitempty"`
	Op          *store.Operation  `json:"operation,omitempty"`
	CascadeFrom string            `json:"cascade_from,omitempty"`
	Members     map[string]int    `json:"members,omitempty"`
	Queue       *store.QueueEntry `json:"queue,omitempty"`
}

// ColumnsOf is the columns of o.
func ColumnsOf(o *store.Object) Columns {
	return Columns{ID: o.ID, Tenant: o.Tenant, Kind: o.Kind, ParentID: o.ParentID, State: o.State, Version: o.Version}
}

// PackObject appends the packed form of o to b.
func PackObject(b []byte, o *store.Object) ([]byte, error) {
	tail := packedTail{Spec: o.Spec, Defaulted: o.Defaulted, Status: o.Status, Op: o.Op, CascadeFrom: o.CascadeFrom, Members: o.Members, Queue: o.Queue}
	hasTail := packFlags(o)&packTail != 0
	b, err := packFixed(b, o)
	if err != nil {
		return nil, err
	}
	if hasTail {
		j, err := json.Marshal(tail)
		if err != nil {
			return nil, fmt.Errorf("pack %s: %w", o.ID, err)
		}
		b = append(b, j...)
	}
	return b, nil
}

// IsPacked says whether data is an object's packed form (PackObject) rather than its JSON,
// which starts with '{'.
func IsPacked(data []byte) bool { return len(data) >= 2 && data[0] == packVersion }

// packFlags are the flags of o's packed form.
func packFlags(o *store.Object) byte {
	var flags byte
	if o.Spec != nil {
		flags |= packSpec
	}
	if o.Defaulted != nil {
		flags |= packDefaulted
	}
	if o.Status != nil {
		flags |= packStatus
	}
	if len(o.Spec) > 0 || len(o.Defaulted) > 0 || len(o.Status) > 0 || o.Op != nil || o.CascadeFrom != "" || len(o.Members) > 0 || o.Queue != nil {
		flags |= packTail
	}
	return flags
}

// packFixed appends what every packed object has: the version, the flags, the name and the
// times.
func packFixed(b []byte, o *store.Object) ([]byte, error) {
	b = append(b, packVersion, packFlags(o))
	b = AppendBytes(b, []byte(o.Name))
	var err error
	if b, err = appendTime(b, o.CreatedAt, time.Time{}); err != nil {
		return nil, fmt.Errorf("pack %s: %w", o.ID, err)
	}
	for _, t := range []time.Time{o.StateSince, o.UpdatedAt, o.Due} {
		if b, err = appendTime(b, t, o.CreatedAt); err != nil {
			return nil, fmt.Errorf("pack %s: %w", o.ID, err)
		}
	}
	return b, nil
}

// UnpackObject decodes a packed object whose entry holds columns c.
func UnpackObject(data []byte, c Columns) (*store.Object, error) {
	o := &store.Object{ID: c.ID, Tenant: c.Tenant, Kind: c.Kind, ParentID: c.ParentID, State: c.State, Version: c.Version}
	if len(data) < 2 || data[0] != packVersion {
		return nil, fmt.Errorf("unpack %s: %w", c.ID, ErrDamaged)
	}
	flags := data[1]
	d := &Decoder{B: data[2:]}
	o.Name = string(d.Bytes())
	o.CreatedAt = d.time(time.Time{})
	for _, t := range []*time.Time{&o.StateSince, &o.UpdatedAt, &o.Due} {
		*t = d.time(o.CreatedAt)
	}
	if d.Err != nil {
		return nil, fmt.Errorf("unpack %s: %w", c.ID, d.Err)
	}
	if flags&packTail != 0 {
		var tail packedTail
		if err := json.Unmarshal(d.B, &tail); err != nil {
			return nil, fmt.Errorf("unpack %s: %w", c.ID, err)
		}
		o.Spec, o.Defaulted, o.Status, o.Op, o.CascadeFrom, o.Members, o.Queue =
			tail.Spec, tail.Defaulted, tail.Status, tail.Op, tail.CascadeFrom, tail.Members, tail.Queue
	}
	if flags&packSpec != 0 && o.Spec == nil {
		o.Spec = map[string]any{}
	}
	if flags&packDefaulted != 0 && o.Defaulted == nil {
		o.Defaulted = []string{}
	}
	if flags&packStatus != 0 && o.Status == nil {
		o.Status = map[string]any{}
	}
	return o, nil
}

// DecodeStored decodes an object's data as a store's row holds it: its packed form, whose row
// holds the rest in columns c, or its JSON, which holds everything (what the PostgreSQL store
// wrote before its schema version 7, read as it is: no migration rewrites it).
func DecodeStored(data []byte, c Columns) (*store.Object, error) {
	if IsPacked(data) {
		return UnpackObject(data, c)
	}
	return DecodeObject(data)
}

// PackedSpec decodes only the spec of a packed object (nil when it has none).
func PackedSpec(data []byte) (map[string]any, error) {
	if len(data) < 2 || data[0] != packVersion {
		return nil, ErrDamaged
	}
	if data[1]&packTail == 0 {
		return nil, nil
	}
	d := &Decoder{B: data[2:]}
	d.Bytes()
	created := d.time(time.Time{})
	for range 3 {
		d.time(created)
	}
	if d.Err != nil {
		return nil, d.Err
	}
	var tail struct {
		Spec map[string]any `json:"spec"`
	}
	if err := json.Unmarshal(d.B, &tail); err != nil {
		return nil, err
	}
	return tail.Spec, nil
}

// Time kinds of the packed form.
const (
	timeZero  = iota // the zero time
	timeUTC          // seconds and nanoseconds since 1970, in UTC
	timeZone         // time.Time.MarshalBinary (with its zone offset)
	timeAfter        // nanoseconds after the object's creation (both in UTC): 3-5 bytes
)

// appendTime appends a time: a zero time as one byte, a time with no offset from UTC as
// nanoseconds after base (when base is such a time too) or as seconds and nanoseconds (about
// 10 bytes), any other with its offset.
func appendTime(b []byte, t, base time.Time) ([]byte, error) {
	if t.IsZero() {
		return append(b, timeZero), nil
	}
	if _, off := t.Zone(); off == 0 {
		if _, boff := base.Zone(); !base.IsZero() && boff == 0 {
			if d := t.Sub(base); base.Add(d).Equal(t) { // not saturated
				return binary.AppendVarint(append(b, timeAfter), int64(d)), nil
			}
		}
		b = append(b, timeUTC)
		b = binary.AppendVarint(b, t.Unix())
		return binary.AppendUvarint(b, uint64(t.Nanosecond())), nil
	}
	m, err := t.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return AppendBytes(append(b, timeZone), m), nil
}

// time reads a time appendTime wrote with base. A time with no offset decodes in UTC, as
// JSON's RFC 3339 "Z" does.
func (d *Decoder) time(base time.Time) time.Time {
	switch d.Byte() {
	case timeZero:
		return time.Time{}
	case timeUTC:
		sec := d.Varint()
		nsec := d.Uvarint()
		if nsec >= 1e9 {
			d.Fail()
			return time.Time{}
		}
		return time.Unix(sec, int64(nsec)).UTC()
	case timeAfter:
		n := d.Varint()
		if base.IsZero() {
			d.Fail()
			return time.Time{}
		}
		return base.Add(time.Duration(n)).UTC()
	case timeZone:
		var t time.Time
		if err := t.UnmarshalBinary(d.Bytes()); err != nil {
			d.Fail()
		}
		return t
	}
	d.Fail()
	return time.Time{}
}
