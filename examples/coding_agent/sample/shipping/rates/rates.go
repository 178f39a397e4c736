// Package rates prices parcels: the Go half of the coding_agent sample.
package rates

import "errors"

// ErrTooHeavy is returned for parcels over the carrier's weight limit.
var ErrTooHeavy = errors.New("parcel too heavy")

// Parcel is one item to ship.
type Parcel struct {
	Grams   int
	Express bool
}

// Price returns the cost of shipping p, in cents.
func Price(p Parcel) (int, error) {
	if p.Grams > 30000 {
		return 0, ErrTooHeavy
	}
	cents := 500 + p.Grams/100*10
	if p.Express {
		cents *= 2
	}
	return cents, nil
}
