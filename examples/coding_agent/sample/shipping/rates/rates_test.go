package rates

import "testing"

func TestPrice(t *testing.T) {
	for _, tc := range []struct {
		p    Parcel
		want int
	}{
		{Parcel{Grams: 0}, 500},
		{Parcel{Grams: 1000}, 600},
		{Parcel{Grams: 1000, Express: true}, 1200},
	} {
		if got, err := Price(tc.p); err != nil || got != tc.want {
			t.Errorf("Price(%+v) = %d, %v; want %d", tc.p, got, err, tc.want)
		}
	}
	if _, err := Price(Parcel{Grams: 30001}); err != ErrTooHeavy {
		t.Errorf("a 30001 g parcel: %v, want ErrTooHeavy", err)
	}
}
