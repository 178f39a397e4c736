// Package chain carries the guard chain's word that a tool call was
// admitted. A tool's handler run any other way would skip the chain (kill
// switch, rate limit, scope, audit, span), so catalog.ToolSpec.Invoke
// takes an Admitted and refuses the zero one.
//
// Only packages under core/ can import this one, so an adapter or an
// embedder can neither name Admitted nor call Admit: the zero value (which
// any package can still obtain, by type inference) is all it can pass, and
// Invoke refuses it. Within core/, the test beside this file checks that
// package core alone calls Admit, in its non-test files, and that no other
// package but catalog imports this one. So a reader follows App.Call to
// the handler by jump-to-definition, and the guarantee is checked before
// the code runs rather than by a hand-off at initialisation.
package chain

// Admitted is the guard chain's proof that it admitted a tool call.
type Admitted struct{ admitted bool }

// Admit is called by the guard chain (core.App.Call) once a call is
// admitted, to run the tool.
func Admit() Admitted { return Admitted{admitted: true} }

// OK reports whether a came from Admit; the zero Admitted did not.
func (a Admitted) OK() bool { return a.admitted }
