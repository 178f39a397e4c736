package core

// InvokeTool runs a tool's handler without the guard chain. Only a
// benchmark's baseline needs that: what the chain adds is the difference.
var InvokeTool = invokeTool
