package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/mcpdrift/mcpdrift/decide"
	"github.com/mcpdrift/mcpdrift/examples"
	"github.com/mcpdrift/mcpdrift/manifest"
	"github.com/mcpdrift/mcpdrift/mcpclient"
	"github.com/mcpdrift/mcpdrift/mockserver"
	"github.com/mcpdrift/mcpdrift/observe"
	"github.com/mcpdrift/mcpdrift/proxy"
	"github.com/mcpdrift/mcpdrift/safetext"
	"github.com/mcpdrift/mcpdrift/schemadiff"
	"github.com/mcpdrift/mcpdrift/surface"
)

// The demo's surface: the bundled server's instructions, prompts and
// resource templates, pinned with its tools, poisoned in the rug pull,
// caught by drift, and withheld by the gateway.

// demoSurfaces are the bundled surfaces: the approved one and the one
// whose instructions were poisoned.
func demoSurfaces() (approved, poisoned *mockserver.Surface, err error) {
	if _, approved, err = mockserver.LoadManifest(examples.SurfaceV1); err != nil {
		return nil, nil, err
	}
	_, poisoned, err = mockserver.LoadManifest(examples.SurfaceV2Poisoned)
	return approved, poisoned, err
}

// demoGateway puts the gateway in front of the rug-pulled server, with
// what was pinned over the wire as its baseline, and shows what an agent
// reads through it: the approved instructions in place of the poisoned
// ones under the review profile, and the whole server withheld under
// fail-closed.
func demoGateway(ctx context.Context, e *env, upstream string, tl *manifest.ToolList, pinned *surface.Surface) error {
	say := func(format string, a ...any) { fmt.Fprintf(e.stderr, format, a...) }
	say("8. the same server behind the gateway (mcpdrift proxy, enforce), an agent connecting through it:\n")
	for _, prof := range []*schemadiff.DecisionProfile{schemadiff.ReviewProfile, schemadiff.FailClosedProfile} {
		obs, err := demoThroughGateway(ctx, upstream, tl, pinned, prof)
		if err != nil {
			return err
		}
		tools := 0
		if parsed, err := manifest.ParseToolList(obs.Transcript); err == nil {
			tools = len(parsed.Tools)
		}
		got := obs.Surface.Instructions
		switch {
		case got.Digest == pinned.Instructions.Digest:
			say("   %s: the poisoned instructions are withheld; the agent reads the approved ones (%s), and %d of %d tools\n",
				prof.Name, shortDigest(got.Digest), tools, len(tl.Tools))
		default:
			// Never: the gateway serves the approved instructions or none.
			say("   %s: the agent reads instructions %s, not the approved %s\n", prof.Name, safetext.Escape(got.Digest), safetext.Escape(pinned.Instructions.Digest))
		}
	}
	say("   (the decision log says instructions_replaced; under fail-closed the server is withheld: server_instructions_changed)\n\n")
	return nil
}

// demoThroughGateway lists a gateway in front of upstream as an agent
// would, the surface included.
func demoThroughGateway(ctx context.Context, upstream string, tl *manifest.ToolList, pinned *surface.Surface, prof *schemadiff.DecisionProfile) (*mcpclient.Observation, error) {
	b := decide.NewBaseline("acme-github", manifest.Identity{Endpoint: upstream, ServerName: "acme-github", ServerVersion: "1.0.0"}, tl.Tools)
	b.Surface = pinned
	g, err := proxy.New(proxy.Config{Upstream: proxy.Upstream{URL: upstream}, Mode: proxy.Enforce, Target: upstream, Baseline: b, Profile: prof, ServerID: "acme-github"})
	if err != nil {
		return nil, err
	}
	defer g.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, &exitError{ExitInconclusive, "demo: cannot listen on loopback: " + safetext.Inert(err.Error())}
	}
	hs := &http.Server{Handler: g.Handler(proxy.HTTPOptions{}), ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	url := "http://" + ln.Addr().String() + "/mcp"
	obs, err := mcpclient.ListTools(ctx, mcpclient.Config{BaseURL: url, ClientName: "mcpdrift", ClientVersion: version(), Surface: surfaceOptions(false)})
	if err != nil {
		return nil, observe.Failed(url, err)
	}
	return obs, nil
}
