package httpx

import (
	"crypto/x509"
	"net/http"
	"net/netip"
	"slices"
	"syscall"

	"github.com/arrowhead-go/arrowhead/core/security"
)

// This file is compiled only into this package's tests. It is the one place
// the address policy is ever replaced: production code has no switch that
// loosens the guard.

// AdmitOnly makes e admit exactly the given addresses (an httptest server's
// loopback address) on top of the real policy, which still decides every
// other address.
func AdmitOnly(e *Egress, admitted ...netip.Addr) {
	e.addrPolicy = func(a netip.Addr) security.Decision {
		if slices.Contains(admitted, a.Unmap()) {
			return security.Decision{Allowed: true, Rule: "test-admitted"}
		}
		return security.CheckAddr(a)
	}
}

// TrustRoots makes e verify servers against pool instead of the system roots.
func TrustRoots(e *Egress, pool *x509.CertPool) { e.rootCAs = pool }

// ObserveDials reports every address the Control hook is asked to approve.
func ObserveDials(e *Egress, f func(netip.AddrPort)) { e.dialObserver = f }

// TransportOf returns the transport e builds for a hop to target.
func TransportOf(e *Egress, target security.Target) *http.Transport {
	return e.transport(&hop{target: target})
}

// ControlFor returns the Control hook e installs for a hop that approved
// pinned, exempt or not.
func ControlFor(e *Egress, pinned []netip.AddrPort, exempt bool) func(network, address string, c syscall.RawConn) error {
	return e.control(&hop{pinned: pinned, exempt: exempt})
}

// Operator-facing causes, exported for assertions.
var (
	ErrBodyCap       = errBodyCap
	ErrWireCap       = errWireCap
	ErrContentLength = errContentLength
	ErrPinViolation  = errPinViolation
)
