package mockserver

import (
	"net/http"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// metaSubscriptionID tags every notification of a subscriptions/listen
// stream (2026-07-28): the JSON-RPC id of the listen request.
const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// listen serves a 2026-07-28 subscriptions/listen request
// (Config.ListChanged): an event stream that acknowledges the honoured
// subset of params.notifications (toolsListChanged only), then carries
// notifications/tools/list_changed, tagged with the subscription id,
// whenever the tools are swapped, until the client goes away or the
// server closes.
func (s *Server) listen(w http.ResponseWriter, r *http.Request, entry *LogEntry, m *message) {
	id := m.IDRaw()
	want := false
	if n, ok := m.Param("notifications"); ok && n.Kind() == jcs.Object {
		if v, ok := n.Get("toolsListChanged"); ok && v.Kind() == jcs.True {
			want = true
		}
	}
	sub, ch := s.subscribe()
	defer s.unsubscribe(sub)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	entry.Status = http.StatusOK
	sw := frame.NewSSEWriter(w)
	meta := append(append([]byte(`{"`+metaSubscriptionID+`":`), id...), '}')
	honoured := `{}`
	if want {
		honoured = `{"toolsListChanged":true}`
	}
	ack := append(append(append([]byte(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":`), meta...), `,"notifications":`+honoured...), "}}"...)
	sw.Event(frame.Event{Type: "message", Data: ack})
	if sw.Flush() != nil {
		return
	}
	changed := append(append([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":`), meta...), "}}"...)
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			// A graceful end: the result, then the stream closes.
			end := append(append([]byte(`{"resultType":"complete","_meta":`), meta...), '}')
			sw.Event(frame.Event{Type: "message", Data: responseBytes(id, end)})
			_ = sw.Flush()
			return
		case <-ch:
			if !want {
				continue
			}
			sw.Event(frame.Event{Type: "message", Data: changed})
			if sw.Flush() != nil {
				return
			}
		}
	}
}
