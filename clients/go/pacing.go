package robotsd

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// maxLocalDelay caps the crawl-delay a Transport keeps without pacing, as robotsd caps it when
// pacing (its default --max-crawl-delay): a Crawl-delay: 86400 would fetch a page a day.
const maxLocalDelay = 60 * time.Second

// LocalPaceGuard is added to a crawl-delay the Transport keeps itself (NoPacing), as robotsd adds
// its --pace-guard between the slots it hands out: a request that starts or reaches the site a
// little late (a timer firing late, a busy machine) followed by one on time still leaves the
// site the whole crawl-delay. Without it, a busy 2-core machine showed the site 164 ms between
// two fetches under a 200 ms crawl-delay.
const LocalPaceGuard = 50 * time.Millisecond

// originKey is the request's origin: scheme, host and port, as robotsd keys pacing.
func originKey(req *http.Request) string {
	scheme := strings.ToLower(req.URL.Scheme)
	host := strings.ToLower(req.URL.Hostname())
	port := req.URL.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + host + ":" + port
}

// sleep waits d, or until ctx is done (then its error).
func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

// localPacer keeps a crawl-delay between the starts of one Transport's requests to an origin,
// as robotsd does for a fleet: each request takes the earliest start that is its interval after
// the origin's last one.
type localPacer struct {
	mu      sync.Mutex
	last    map[string]time.Time // origin → the start given to its last request
	pruneAt int
	held    map[string]time.Time // origin → the end of a Retry-After it answered
}

// maxLocalHold caps a Retry-After a Transport honours by itself, as robotsd caps it (its
// default --max-retry-after).
const maxLocalHold = 10 * time.Minute

// hold keeps the Transport's requests to origin back until the end of a Retry-After it
// answered at now.
func (l *localPacer) hold(origin, retryAfter string, now time.Time) {
	var wait time.Duration
	if seconds, err := strconv.ParseUint(retryAfter, 10, 64); err == nil {
		if seconds > uint64(maxLocalHold/time.Second) {
			seconds = uint64(maxLocalHold / time.Second)
		}
		wait = time.Duration(seconds) * time.Second
	} else if at, err := http.ParseTime(retryAfter); err == nil {
		wait = at.Sub(now)
	}
	if wait <= 0 {
		return
	}
	if wait > maxLocalHold {
		wait = maxLocalHold
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == nil {
		l.held = map[string]time.Time{}
	}
	if until := now.Add(wait); until.After(l.held[origin]) {
		l.held[origin] = until
	}
}

// heldFor is how long origin is still held back by a Retry-After (zero when it is not).
func (l *localPacer) heldFor(origin string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	until, ok := l.held[origin]
	if !ok {
		return 0
	}
	if !until.After(now) {
		delete(l.held, origin)
		return 0
	}
	return until.Sub(now)
}

// wait takes the request's start, interval and LocalPaceGuard after the last one to origin, and
// waits for it (or for ctx; the start is then lost, and the site sees a longer gap). An interval
// of zero (no crawl-delay) waits for nothing.
func (l *localPacer) wait(ctx context.Context, origin string, interval time.Duration) error {
	if interval > 0 {
		interval += LocalPaceGuard
	}
	return sleep(ctx, time.Until(l.take(origin, interval, time.Now())))
}

func (l *localPacer) take(origin string, interval time.Duration, now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]time.Time{}
	}
	at := now
	if last, ok := l.last[origin]; ok && last.Add(interval).After(at) {
		at = last.Add(interval)
	}
	l.last[origin] = at
	// Forget the origins whose last start is too long ago to matter, once there are many.
	if len(l.last) > l.pruneAt {
		for o, t := range l.last {
			if now.Sub(t) > maxLocalDelay {
				delete(l.last, o)
			}
		}
		l.pruneAt = 2 * len(l.last)
		if l.pruneAt < 1024 {
			l.pruneAt = 1024
		}
	}
	return at
}

// reporter sends a Transport's reports to robotsd in the background, batched: one goroutine at
// a time posts whatever has been queued since its last post. A pushback is remembered until it
// is sent, so that the Transport's next request to that origin reserves its slot after robotsd
// knows (settled).
type reporter struct {
	mu      sync.Mutex
	next    *reportBatch
	running bool
	// pushback maps an origin to the batch carrying its latest pushback; batches are posted in
	// order, so that one done means every earlier one is.
	pushback map[string]*reportBatch
}

type reportBatch struct {
	reports []Report
	done    chan struct{}
}

// The longest a report's post may take, and the longest a request waits for a pushback to be
// reported before reserving its slot anyway.
const reportTimeout = 10 * time.Second

func (r *reporter) add(client *Client, origin string, report Report, pushback bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == nil {
		r.next = &reportBatch{done: make(chan struct{})}
	}
	r.next.reports = append(r.next.reports, report)
	if pushback {
		if r.pushback == nil {
			r.pushback = map[string]*reportBatch{}
		}
		r.pushback[origin] = r.next
	}
	if !r.running {
		r.running = true
		go r.run(client)
	}
}

func (r *reporter) run(client *Client) {
	for {
		r.mu.Lock()
		batch := r.next
		if batch == nil {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.next = nil
		r.mu.Unlock()
		for start := 0; start < len(batch.reports); start += MaxBatch {
			end := start + MaxBatch
			if end > len(batch.reports) {
				end = len(batch.reports)
			}
			ctx, cancel := context.WithTimeout(context.Background(), reportTimeout)
			// A report that fails is dropped: robotsd will hear of the next pushback.
			_, _ = client.Feedback(ctx, batch.reports[start:end])
			cancel()
		}
		close(batch.done)
		r.mu.Lock()
		for origin, b := range r.pushback {
			if b == batch {
				delete(r.pushback, origin)
			}
		}
		r.mu.Unlock()
	}
}

// settled waits until a pushback from origin that is being reported has been (at most
// reportTimeout), or ctx is done.
func (r *reporter) settled(ctx context.Context, origin string) error {
	r.mu.Lock()
	batch := r.pushback[origin]
	r.mu.Unlock()
	if batch == nil {
		return nil
	}
	timer := time.NewTimer(reportTimeout)
	defer timer.Stop()
	select {
	case <-batch.done:
		return nil
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
