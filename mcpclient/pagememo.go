package mcpclient

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"sync"
)

// A PageMemo lets the listings of one run share their reading of
// tools/list pages (drift lists a server on a second connection to see
// that the list does not vary per connection). A page one listing parsed,
// checked and handed to its consumer is recorded under the SHA-256 of its
// request and its response, with what the checks read of it (its cursor,
// its tool count, its cache fields, the serverInfo in its _meta) and what
// the consumer made of it. Another listing that sends the same request
// bytes and gets the same response bytes does not parse them again: the
// same bytes parse alike and answer the same request alike. Anything
// else (a byte of difference, another request id, another cursor) is
// parsed and checked as always. The HTTP status is not in the key and is
// checked as for any response.
//
// The listings run side by side: a listing that gets page k before the
// recording listing has read its page k waits until it has (or has ended,
// or the run's context is done), then parses the page when it is not the
// one recorded. A listing that takes known pages never records, so none
// waits on itself.
type PageMemo struct {
	mu      sync.Mutex
	pages   map[[32]byte]*knownPage
	read    int           // the pages the recording listing has read
	done    bool          // the recording listing has ended
	changed chan struct{} // closed, and replaced, at each change
}

// NewPageMemo returns an empty memo.
func NewPageMemo() *PageMemo {
	return &PageMemo{pages: map[[32]byte]*knownPage{}, changed: make(chan struct{})}
}

// knownPage is what a listing read of one page.
type knownPage struct {
	next       string
	hasNext    bool
	tools      int
	ttlOK      bool
	ttl        int64
	scopeOK    bool
	scope      string
	serverInfo *ServerInfo
	payload    any
}

// pageKey is the key of a request and the response to it.
func pageKey(request, response []byte) [32]byte {
	h := sha256.New()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(request)))
	h.Write(n[:])
	h.Write(request)
	h.Write(response)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// A recorder records the recording listing's pages on a goroutine of its
// own, in the order they were read: hashing a page's response is then
// not on the listing's path to its next request. A listing that waits for a page still waits for it to be
// recorded, and finish waits for every page to be.
type recorder struct {
	m    *PageMemo
	jobs chan recordJob
	done chan struct{}
}

type recordJob struct {
	request, response []byte // both kept unchanged by their owner
	p                 *knownPage
}

// recorder starts the recorder of the listing that records into m.
func (m *PageMemo) recorder() *recorder {
	// Unbuffered: a page's bytes are held until it is hashed, so at most
	// one page waits (hashing one is quicker than reading the next).
	r := &recorder{m: m, jobs: make(chan recordJob), done: make(chan struct{})}
	go func() {
		defer close(r.done)
		for j := range r.jobs {
			var k [32]byte
			if j.p != nil {
				k = pageKey(j.request, j.response)
			}
			m.record(k, j.p)
		}
		m.finish()
	}()
	return r
}

// record records one more page read: p under the key of request and
// response, or, when p is nil (a page with nothing to replay), only the
// count.
func (r *recorder) record(request, response []byte, p *knownPage) {
	r.jobs <- recordJob{request, response, p}
}

// finish records the end of the listing, once every page is recorded.
func (r *recorder) finish() {
	close(r.jobs)
	<-r.done
}

// record notes that the recording listing read one more page, and
// keeps it under k when p is set (a page with nothing to replay is only
// counted).
func (m *PageMemo) record(k [32]byte, p *knownPage) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.read++
	if _, ok := m.pages[k]; p != nil && !ok {
		m.pages[k] = p
	}
	m.notify()
}

// finish notes that the recording listing has ended.
func (m *PageMemo) finish() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.done = true
	m.notify()
}

func (m *PageMemo) notify() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// lookup is the page recorded for page number page of a listing, given
// its request and response: it waits while the recording listing has not
// read that many pages.
func (m *PageMemo) lookup(ctx context.Context, page int, request, response []byte) *knownPage {
	k := pageKey(request, response)
	for {
		m.mu.Lock()
		p, read, done, ch := m.pages[k], m.read, m.done, m.changed
		m.mu.Unlock()
		if p != nil || read >= page || done {
			return p
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
	}
}

// Len is the number of pages recorded.
func (m *PageMemo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pages)
}
