package decide

import "github.com/mcpdrift/mcpdrift/schemadiff"

// ReasonValidatesSame: the served tool's bytes changed, but every change
// needs no review (schemadiff.NeedsNoReview): a dialect no keyword of the
// schemas reads differently, annotations validation never reads, members
// outside the digest projection, notation. Served, as a notation-only
// change is.
const ReasonValidatesSame = "tool_changed_validates_same"

// allowReasons are the reasons of a changed tool the profile allows, by
// the reason schemadiff's decision gives (a changed tool is never allowed
// otherwise: "information only" needs a projection that did not change).
var allowReasons = map[string]string{
	schemadiff.ReasonNotationOnly:  ReasonNotationOnly,
	schemadiff.ReasonValidatesSame: ReasonValidatesSame,
}

// verdictReasons are the reasons a report's verdict gives for them.
var verdictReasons = map[string]string{
	ReasonNotationOnly:  schemadiff.ReasonNotationOnly,
	ReasonValidatesSame: schemadiff.ReasonValidatesSame,
}
