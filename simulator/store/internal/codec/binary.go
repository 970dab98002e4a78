package codec

import (
	"encoding/binary"
	"errors"
	"unsafe"
)

// The binary encoding shared by the SQLite journal and the memory store's event logs:
// strings and byte slices are length-prefixed (a uvarint), numbers are varints, flags a byte.

// AppendBytes appends v, length-prefixed.
func AppendBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

// AppendFlag appends a flag as one byte.
func AppendFlag(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// ErrDamaged is a Decoder's error for an encoding cut short or damaged.
var ErrDamaged = errors.New("a journal row is cut short or damaged")

// Decoder reads the encoding from B; the first error sticks in Err (and B empties).
type Decoder struct {
	B   []byte
	Err error
}

// Uvarint reads a uvarint.
func (d *Decoder) Uvarint() uint64 {
	v, n := binary.Uvarint(d.B)
	if n <= 0 {
		d.Fail()
		return 0
	}
	d.B = d.B[n:]
	return v
}

// Varint reads a zig-zag varint (binary.AppendVarint's encoding of a uvarint).
func (d *Decoder) Varint() int64 {
	u := d.Uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// Bytes reads a length-prefixed byte slice that points into the encoding.
func (d *Decoder) Bytes() []byte {
	n := d.Uvarint()
	if d.Err != nil || n > uint64(len(d.B)) {
		d.Fail()
		return nil
	}
	v := d.B[:n:n]
	d.B = d.B[n:]
	return v
}

// Bytes returns the bytes of a string, without a copy: they must not be changed.
func Bytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// String returns a string of b, without a copy: b must not be changed after.
func String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// View reads a string that points into the encoding.
func (d *Decoder) View() string {
	b := d.Bytes()
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// Byte reads one byte.
func (d *Decoder) Byte() byte {
	if len(d.B) == 0 {
		d.Fail()
		return 0
	}
	v := d.B[0]
	d.B = d.B[1:]
	return v
}

// Fail records ErrDamaged (unless an error is recorded already) and stops the decoding.
func (d *Decoder) Fail() {
	if d.Err == nil {
		d.Err = ErrDamaged
	}
	d.B = nil
}
