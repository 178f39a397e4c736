package tasktools

// BoundedResult exposes the result cap to the tests.
var BoundedResult = boundedResult
