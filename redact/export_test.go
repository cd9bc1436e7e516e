package redact

// PercentDecodedForTest is percentDecoded, for the package's external tests.
var PercentDecodedForTest = percentDecoded
