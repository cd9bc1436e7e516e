// Package surface is what a server puts in front of the model beside its
// tools: the instructions of its initialize (or server/discover) result,
// its prompts (prompts/list), its resource templates
// (resources/templates/list) and, when asked for, the resources it lists
// (resources/list). Clients put all of it in the model's context, so a
// rewritten instructions string or prompt description is the same attack
// as a poisoned tool description.
//
// The package is pure: it projects each item from the bytes the server
// sent (parsed strictly by jcs, each projected member the canonical form
// of the value as received, never a Go struct encoded again), digests the
// projection under a versioned projection id that is part of the hashed
// preimage, writes and reads the pinned form kept in mcpdrift's snapshot
// and lock (Marshal, Parse), compares a pinned surface with an observed one
// (Compare) and writes the digests-only record that extends the observed
// record (Evidence). docs/surface.md is the reference of the projections,
// the digests and the states.
//
// The Assay artifacts are not touched: nothing here is part of a tool
// digest, the manifest digest or any field the Assay schemas define.
package surface
