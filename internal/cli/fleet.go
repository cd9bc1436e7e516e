package cli

// servers are the fleet's servers, from the one source given.
func (f *fleetFlags) servers(e *env) ([]*fleetServer, error) {
	src, err := f.selected()
	if err != nil {
		return nil, err
	}
	switch src {
	case "--url":
		return f.urlServers(e)
	}
	return nil, usageErr("%s is not supported by this build", src)
}
