package portstest_test

import (
	"testing"

	"github.com/arrowhead-go/arrowhead/ports"
	"github.com/arrowhead-go/arrowhead/ports/portstest"
)

func TestWorkingSetsDoubleMeetsTheContract(t *testing.T) {
	portstest.RunWorkingSetsContract(t, func(_ *testing.T, l ports.WorkingSetLimits) ports.WorkingSets {
		return portstest.NewWorkingSets(l)
	})
}
