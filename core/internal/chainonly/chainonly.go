// Package chainonly hands the catalog's way of running a bound tool's
// handler to the guard chain, and to nothing else. A handler run any other
// way would skip the chain (kill switch, rate limit, scope, audit, span),
// so package catalog does not export it: it publishes it here at
// initialisation and package core takes it at its own. Only packages under
// core/ can import this one, and a second Take panics, so not even they can
// obtain it once core has.
package chainonly

import "sync"

var (
	mu        sync.Mutex
	published any
	taken     bool
)

// Publish hands f over. Package catalog calls it once, at initialisation.
func Publish[F any](f F) {
	mu.Lock()
	defer mu.Unlock()
	if published != nil || taken {
		panic("chainonly: published twice")
	}
	published = f
}

// Take returns what Publish handed over, once; package core calls it at
// initialisation. It panics on a second call or when nothing of type F was
// published.
func Take[F any]() F {
	mu.Lock()
	defer mu.Unlock()
	f, ok := published.(F)
	if taken || !ok {
		panic("chainonly: taken twice, or nothing of this type was published")
	}
	taken, published = true, nil
	return f
}
