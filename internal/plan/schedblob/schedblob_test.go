package schedblob_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tsekh/tsekh/internal/plan/schedblob"
)

// someSchedule is n operations in id order, with the parts, steps, days and
// minutes of a launch (parts going up and down, item-scope ones with none,
// minutes that are no short decimal), and a slot not planned yet.
func someSchedule(rng *rand.Rand, n int) ([]schedblob.Op, []schedblob.Slot) {
	ops := make([]schedblob.Op, n)
	slots := make([]schedblob.Slot, n)
	id := int64(1 + rng.IntN(1_000_000))
	for i := range ops {
		id += int64(1 + rng.IntN(3))
		part := int64(0)
		if rng.IntN(4) > 0 {
			part = int64(1 + rng.IntN(5_000_000))
		}
		ops[i] = schedblob.Op{ID: id, ItemID: int64(rng.IntN(3_000_000)), PartID: part, Unit: 1 + rng.IntN(4), Seq: 1 + rng.IntN(6),
			WorkCenterID: int64(1 + rng.IntN(300)), Minutes: rng.Float64() * 90}
		day := int64(20_000 + rng.IntN(1_000))
		slots[i] = schedblob.Slot{StartDay: day, StartMin: rng.Float64() * 480, EndDay: day + int64(rng.IntN(3)), EndMin: rng.Float64() * 480}
	}
	if n > 0 {
		slots[n/2] = schedblob.Slot{StartDay: schedblob.NoDay, EndDay: schedblob.NoDay}
	}
	return ops, slots
}

// What is stored reads back the same, bit for bit, and appends to what
// the caller has.
func TestRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 56, 700} {
		ops, slots := someSchedule(rng, n)
		gotOps, err := schedblob.DecodeOps(schedblob.EncodeOps(ops), []schedblob.Op{{ID: -1}})
		require.NoError(t, err)
		require.Equal(t, append([]schedblob.Op{{ID: -1}}, ops...), gotOps)
		gotSlots, err := schedblob.DecodeSlots(schedblob.EncodeSlots(slots), nil)
		require.NoError(t, err)
		require.Len(t, gotSlots, n)
		for i := range slots {
			require.Equal(t, math.Float64bits(slots[i].StartMin), math.Float64bits(gotSlots[i].StartMin))
			require.Equal(t, slots[i], gotSlots[i])
		}
	}
}

// A form cut short, of another version or empty is an error, not a
// schedule with fewer operations.
func TestCorrupt(t *testing.T) {
	ops, slots := someSchedule(rand.New(rand.NewPCG(3, 4)), 5)
	b := schedblob.EncodeOps(ops)
	for _, bad := range [][]byte{nil, {}, {2}, b[:len(b)-1], b[:len(b)-8]} {
		_, err := schedblob.DecodeOps(bad, nil)
		require.ErrorIs(t, err, schedblob.ErrCorrupt, "%v", bad)
	}
	s := schedblob.EncodeSlots(slots)
	for _, bad := range [][]byte{nil, {}, {2}, s[:len(s)-1], append([]byte{9}, s[1:]...)} {
		_, err := schedblob.DecodeSlots(bad, nil)
		require.ErrorIs(t, err, schedblob.ErrCorrupt)
	}
}

// BenchmarkDecode reads the schedule of a production order of 56
// operations, its operations and slots.
func BenchmarkDecode(b *testing.B) {
	ops, slots := someSchedule(rand.New(rand.NewPCG(5, 6)), 56)
	bo, bs := schedblob.EncodeOps(ops), schedblob.EncodeSlots(slots)
	b.SetBytes(int64(len(bo) + len(bs)))
	var o []schedblob.Op
	var s []schedblob.Slot
	for b.Loop() {
		var err error
		if o, err = schedblob.DecodeOps(bo, o[:0]); err != nil {
			b.Fatal(err)
		}
		if s, err = schedblob.DecodeSlots(bs, s[:0]); err != nil {
			b.Fatal(err)
		}
	}
}
