package cli

import (
	"github.com/spf13/pflag"

	"github.com/mcpdrift/mcpdrift/diff"
	"github.com/mcpdrift/mcpdrift/manifest"
)

// identityFlags are the server half of the identity tuple, pinned beside
// the tools in a snapshot.
type identityFlags struct {
	endpoint, publisherKey, serverName, serverVersion string
}

func (f *identityFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.endpoint, "endpoint", "", `where the tools came from: a URL, or "stdio:" and the exact command line`)
	fs.StringVar(&f.publisherKey, "publisher-key", "", "the publisher key (fingerprint) configured for this server")
	fs.StringVar(&f.serverName, "server-name", "", "the name the server reported (serverInfo.name)")
	fs.StringVar(&f.serverVersion, "server-version", "", "the version the server reported (serverInfo.version)")
}

func (f *identityFlags) identity() manifest.Identity {
	return manifest.Identity{Endpoint: f.endpoint, PublisherKey: f.publisherKey, ServerName: f.serverName, ServerVersion: f.serverVersion}
}

// snapshotPathFor is the default snapshot path beside an artifact
// (diff.SnapshotPathFor): declared.json → declared.snapshot.json.
func snapshotPathFor(out string) string { return diff.SnapshotPathFor(out) }
