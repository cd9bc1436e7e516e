package mockserver

import (
	"net/http"
	"strings"

	"github.com/mcpdrift/mcpdrift/jcs"
	"github.com/mcpdrift/mcpdrift/mcpwire/frame"
)

// metaSubscriptionID tags every notification of a subscriptions/listen
// stream (2026-07-28): the JSON-RPC id of the listen request.
const metaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

// listen serves a 2026-07-28 subscriptions/listen request
// (Config.ListChanged): an event stream that acknowledges the honoured
// subset of params.notifications (toolsListChanged, promptsListChanged,
// resourcesListChanged), then carries each list_changed asked for, tagged
// with the subscription id, whenever the tools or the surface are
// swapped, until the client goes away or the server closes.
func (s *Server) listen(w http.ResponseWriter, r *http.Request, entry *LogEntry, m *message) {
	id := m.IDRaw()
	// The notifications a stream can ask for, and the method each is.
	kinds := []struct{ flag, method string }{
		{"toolsListChanged", "notifications/tools/list_changed"},
		{"promptsListChanged", "notifications/prompts/list_changed"},
		{"resourcesListChanged", "notifications/resources/list_changed"},
	}
	want := map[string]bool{} // method → asked for
	var honoured []string
	if n, ok := m.Param("notifications"); ok && n.Kind() == jcs.Object {
		for _, k := range kinds {
			if v, ok := n.Get(k.flag); ok && v.Kind() == jcs.True {
				want[k.method] = true
				honoured = append(honoured, `"`+k.flag+`":true`)
			}
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
	ack := append(append(append([]byte(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":`), meta...), `,"notifications":{`+strings.Join(honoured, ",")+`}`...), "}}"...)
	sw.Event(frame.Event{Type: "message", Data: ack})
	if sw.Flush() != nil {
		return
	}
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
		case b := <-ch:
			msg, err := frame.Parse(b)
			if err != nil || !want[msg.Method] {
				continue
			}
			changed := append(append([]byte(`{"jsonrpc":"2.0","method":"`+msg.Method+`","params":{"_meta":`), meta...), "}}"...)
			sw.Event(frame.Event{Type: "message", Data: changed})
			if sw.Flush() != nil {
				return
			}
		}
	}
}
