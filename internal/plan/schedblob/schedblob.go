// Package schedblob is the stored form of a production order's schedule
// (the plan_schedules table): its operations as the scheduler places them,
// and their planned slots, as two byte strings. The operations change only
// when the order gains or loses some; the slots change with every re-plan
// that moves the order, so they are kept apart and small: a re-plan
// rewrites the slots of a few hundred orders, not the rows of tens of
// thousands of operations.
//
// Both forms start with a version byte. The operations are in id order,
// each as varints (zig-zag, as encoding/binary writes them): the id's,
// item's and part's (0: none) steps from the operation before, then the
// unit, seq and work centre; and the minutes as the 8 bytes of a float64
// (little endian). The slots are in the same order, each the start day (a
// varint of the days from 1970-01-01; NoDay: none), the start minute (8
// bytes), the end day and the end minute.
package schedblob

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Op is an operation as the scheduler places it.
type Op struct {
	ID           int64
	ItemID       int64
	PartID       int64 // 0: an item-scope operation
	Unit         int
	Seq          int
	WorkCenterID int64
	Minutes      float64
}

// Slot is an operation's planned slot: from minute StartMin of StartDay to
// minute EndMin of EndDay, the days counted from 1970-01-01.
type Slot struct {
	StartDay int64
	StartMin float64
	EndDay   int64
	EndMin   float64
}

// NoDay is the day of a slot not planned yet.
const NoDay = math.MinInt64

// version is the first byte of both forms.
const version = 1

// ErrCorrupt is the error of a form that cannot be read.
var ErrCorrupt = errors.New("schedblob: corrupt schedule")

// EncodeOps is the stored form of ops, which must be in id order.
func EncodeOps(ops []Op) []byte {
	b := make([]byte, 1, 1+16*len(ops))
	b[0] = version
	var prev Op
	for _, op := range ops {
		b = binary.AppendVarint(b, op.ID-prev.ID)
		b = binary.AppendVarint(b, op.ItemID-prev.ItemID)
		b = binary.AppendVarint(b, op.PartID-prev.PartID)
		b = binary.AppendVarint(b, int64(op.Unit))
		b = binary.AppendVarint(b, int64(op.Seq))
		b = binary.AppendVarint(b, op.WorkCenterID)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(op.Minutes))
		prev = op
	}
	return b
}

// DecodeOps appends the operations that b holds to out.
func DecodeOps(b []byte, out []Op) ([]Op, error) {
	if len(b) == 0 || b[0] != version {
		return out, fmt.Errorf("%w: operations of version %v", ErrCorrupt, b[:min(1, len(b))])
	}
	b = b[1:]
	var prev Op
	var v [6]int64
	for len(b) > 0 {
		for i := range v {
			x, n := binary.Varint(b)
			if n <= 0 {
				return out, ErrCorrupt
			}
			v[i], b = x, b[n:]
		}
		if len(b) < 8 {
			return out, ErrCorrupt
		}
		op := Op{ID: prev.ID + v[0], ItemID: prev.ItemID + v[1], PartID: prev.PartID + v[2],
			Unit: int(v[3]), Seq: int(v[4]), WorkCenterID: v[5], Minutes: math.Float64frombits(binary.LittleEndian.Uint64(b))}
		b = b[8:]
		out = append(out, op)
		prev = op
	}
	return out, nil
}

// EncodeSlots is the stored form of the slots, in their operations' order.
func EncodeSlots(slots []Slot) []byte {
	b := make([]byte, 1, 1+22*len(slots))
	b[0] = version
	for _, s := range slots {
		b = binary.AppendVarint(b, s.StartDay)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.StartMin))
		b = binary.AppendVarint(b, s.EndDay)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(s.EndMin))
	}
	return b
}

// DecodeSlots appends the slots that b holds to out.
func DecodeSlots(b []byte, out []Slot) ([]Slot, error) {
	if len(b) == 0 || b[0] != version {
		return out, fmt.Errorf("%w: slots of version %v", ErrCorrupt, b[:min(1, len(b))])
	}
	b = b[1:]
	for len(b) > 0 {
		var s Slot
		var ok bool
		if s.StartDay, s.StartMin, b, ok = moment(b); ok {
			s.EndDay, s.EndMin, b, ok = moment(b)
		}
		if !ok {
			return out, ErrCorrupt
		}
		out = append(out, s)
	}
	return out, nil
}

// moment reads a day and a minute off the front of b.
func moment(b []byte) (day int64, minute float64, rest []byte, ok bool) {
	day, n := binary.Varint(b)
	if n <= 0 || len(b) < n+8 {
		return 0, 0, b, false
	}
	return day, math.Float64frombits(binary.LittleEndian.Uint64(b[n:])), b[n+8:], true
}
