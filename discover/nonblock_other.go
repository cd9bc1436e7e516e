//go:build !unix

package discover

const oNonblock = 0
