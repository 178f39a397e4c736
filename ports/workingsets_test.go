package ports

import (
	"errors"
	"slices"
	"testing"
)

func TestWorkingSetLimitsCheckAndRoom(t *testing.T) {
	ok := WorkingSetLimits{MaxSetsPerOwner: 2, MaxItemsPerSet: 3, MaxSetsTotal: 4}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []WorkingSetLimits{{0, 3, 4}, {2, 0, 4}, {2, 3, 0}, {-1, 3, 4}} {
		if bad.Check() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	cases := []struct {
		mine, total int
		want        error
	}{
		{0, 0, nil},
		{1, 3, nil},
		{2, 0, ErrTooManySets},
		{2, 4, ErrTooManySets},
		{1, 4, ErrSetsExhausted},
	}
	for _, c := range cases {
		if err := ok.RoomForSet(c.mine, c.total); !errors.Is(err, c.want) || (c.want == nil && err != nil) {
			t.Errorf("RoomForSet(%d, %d) = %v, want %v", c.mine, c.total, err, c.want)
		}
	}
}

func TestWorkingSetItemsStoredForm(t *testing.T) {
	items := []WorkingSetItem{{Kind: PinDoc, Identifier: "a.md", Note: "why"}, {Kind: PinRepoFile, Identifier: "src/x.go"}}
	raw, err := EncodeWorkingSetItems(items)
	if err != nil {
		t.Fatal(err)
	}
	// The form existing stores hold: short keys, no empty note.
	if want := `[{"k":"doc","i":"a.md","n":"why"},{"k":"repo_file","i":"src/x.go"}]`; string(raw) != want {
		t.Fatalf("stored form %s, want %s", raw, want)
	}
	back, err := DecodeWorkingSetItems(raw)
	if err != nil || !slices.Equal(back, items) {
		t.Fatalf("decoded %+v, %v", back, err)
	}
	for _, bad := range []string{`{"k":"doc"}`, `[{"k":"exe","i":"x"}]`, `not json`} {
		if _, err := DecodeWorkingSetItems([]byte(bad)); !errors.Is(err, ErrWorkingSetDamaged) {
			t.Errorf("%s decoded (%v), want ErrWorkingSetDamaged", bad, err)
		}
	}
}
