package mcpwire

// Method is what the specification says of one JSON-RPC method: whether
// it is a notification (sent without an id, never answered) or a request,
// and which side may send it. The table covers every revision this
// project speaks (2024-11-05 to 2026-07-28): a method one revision removed
// stays, since a legacy session still uses it.
type Method struct {
	Notification bool
	FromClient   bool // a client sends it to a server
	FromServer   bool // a server sends it to a client
}

// methods is the one table of the specification's methods.
var methods = map[string]Method{
	// Requests a client sends.
	"initialize":               {FromClient: true},
	"server/discover":          {FromClient: true},
	"ping":                     {FromClient: true, FromServer: true},
	"tools/list":               {FromClient: true},
	"tools/call":               {FromClient: true},
	"resources/list":           {FromClient: true},
	"resources/templates/list": {FromClient: true},
	"resources/read":           {FromClient: true},
	"resources/subscribe":      {FromClient: true},
	"resources/unsubscribe":    {FromClient: true},
	"prompts/list":             {FromClient: true},
	"prompts/get":              {FromClient: true},
	"completion/complete":      {FromClient: true},
	"logging/setLevel":         {FromClient: true},
	"subscriptions/listen":     {FromClient: true},
	// Requests either side sends (2025-11-25 tasks).
	"tasks/get":    {FromClient: true, FromServer: true},
	"tasks/result": {FromClient: true, FromServer: true},
	"tasks/list":   {FromClient: true, FromServer: true},
	"tasks/cancel": {FromClient: true, FromServer: true},
	// Requests a server sends.
	"sampling/createMessage": {FromServer: true},
	"elicitation/create":     {FromServer: true},
	"roots/list":             {FromServer: true},
	// Notifications.
	"notifications/initialized":                {Notification: true, FromClient: true},
	"notifications/roots/list_changed":         {Notification: true, FromClient: true},
	"notifications/cancelled":                  {Notification: true, FromClient: true, FromServer: true},
	"notifications/progress":                   {Notification: true, FromClient: true, FromServer: true},
	"notifications/tasks/status":               {Notification: true, FromClient: true, FromServer: true},
	"notifications/message":                    {Notification: true, FromServer: true},
	"notifications/resources/updated":          {Notification: true, FromServer: true},
	"notifications/resources/list_changed":     {Notification: true, FromServer: true},
	"notifications/tools/list_changed":         {Notification: true, FromServer: true},
	"notifications/prompts/list_changed":       {Notification: true, FromServer: true},
	"notifications/elicitation/complete":       {Notification: true, FromServer: true},
	"notifications/subscriptions/acknowledged": {Notification: true, FromServer: true},
}

// LookupMethod returns what the specification says of a method, by its
// exact name.
func LookupMethod(name string) (Method, bool) {
	m, ok := methods[name]
	return m, ok
}

// Methods calls f with every method the table holds (in no set order).
func Methods(f func(name string, m Method)) {
	for name, m := range methods {
		f(name, m)
	}
}

// NotificationFromClient reports whether a message without an id whose
// method is name may go from a client to a server: a notification the
// specification defines in that direction. A request's method sent
// without an id is not one (a server that dispatches on the method alone
// would run it, and nothing could answer it).
func NotificationFromClient(name string) bool {
	m, ok := methods[name]
	return ok && m.Notification && m.FromClient
}

// NotificationFromServer is NotificationFromClient for the other
// direction.
func NotificationFromServer(name string) bool {
	m, ok := methods[name]
	return ok && m.Notification && m.FromServer
}
