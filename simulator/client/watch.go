package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"

	"github.com/lifecyclesim/terraform-provider-lifecycle/simulator/wire"
)

// NDJSON is the media type of an answer that streams, one JSON document a line: a create, an
// action or a delete sent with ?wait=static.
const NDJSON = wire.NDJSON

// Watch is the rest of the answer to a create, an action or a delete that waits on its own
// request (CreateWait, ActWait, DeleteWait): the server sends the object again once it is
// static, or the error that ended its wait. Call Wait, or Close when not waiting.
type Watch struct {
	c              *Client
	collection, id string
	opts           WaitOptions
	first          *Object
	body           io.ReadCloser // nil when the server answered without streaming
	dec            *json.Decoder
}

// CreateWait is Create that also waits, on the same request, for the new object to be static
// (POST ?wait=static). It returns as soon as the server accepts the object, so the caller
// knows its ID before any wait; the Watch's Wait returns it once static. One request then does
// what Create and WaitStatic do with two.
func (c *Client) CreateWait(ctx context.Context, collection string, req CreateRequest, opts WaitOptions) (*Object, *Watch, error) {
	return c.watch(collection, opts, func(w *Watch) (*Object, error) { return c.create(ctx, collection, req, w) })
}

// ActWait is Act that also waits, on the same request, for the object to be static again
// (POST .../actions/NAME?wait=static). It returns the object in transition as soon as the
// server accepts the action; the Watch's Wait returns it once static.
func (c *Client) ActWait(ctx context.Context, collection, id, action string, req ActionRequest, opts WaitOptions) (*Object, *Watch, error) {
	return c.watch(collection, opts, func(w *Watch) (*Object, error) { return c.act(ctx, collection, id, action, req, w) })
}

// DeleteWait is Delete that also waits, on the same request, until the object is gone or
// static in the mode's end state (DELETE ?wait=static). It returns nil, nil, nil when the
// object was removed at once; else the object as the server answered at once, and a Watch
// whose Wait returns it once static, or fails with not_found (IsNotFound) once it is gone.
func (c *Client) DeleteWait(ctx context.Context, collection, id, mode string, opts WaitOptions) (*Object, *Watch, error) {
	return c.watch(collection, opts, func(w *Watch) (*Object, error) { return c.delete(ctx, collection, id, mode, w) })
}

// watch sends a request that waits on itself and returns its first answer and the Watch of
// the rest.
func (c *Client) watch(collection string, opts WaitOptions, send func(*Watch) (*Object, error)) (*Object, *Watch, error) {
	w := &Watch{c: c, collection: collection, opts: opts.withDefaults()}
	o, err := send(w)
	if err != nil || o == nil {
		return nil, nil, err
	}
	w.first, w.id = o, o.ID
	if o.Static {
		w.drain() // nothing follows
	}
	return o, w, nil
}

// ask makes r ask the server to wait on it, and to hand the rest of its answer to w.
func (w *Watch) ask(ctx context.Context, r *request) {
	if r.query == nil {
		r.query = url.Values{}
	}
	r.query.Set("wait", "static")
	r.query.Set("timeout", pollTimeout(ctx, w.c.clock.Now(), w.opts.PollTimeout).String())
	r.rest = w
}

// Wait returns the object once it is static, as WaitStatic does and with its errors. It reads
// the rest of the answer; when that ends without a static object (the server's timeout passed,
// the connection dropped, the context of the request that started it ended, the server does
// not stream) it goes on with WaitStatic under ctx, from the last state seen. OnProgress sees
// the states after the first answer (the caller has that one).
func (w *Watch) Wait(ctx context.Context) (*Object, error) {
	defer w.Close()
	last := w.first
	if last.Static {
		return last, nil
	}
	if w.dec != nil {
		o, err := w.next(ctx)
		switch {
		case err == nil:
			if w.opts.OnProgress != nil && o.State != last.State {
				w.opts.OnProgress(o)
			}
			if o.Static {
				return o, nil
			}
			last = o
		case errors.As(err, new(*Error)) && !IsTransient(err): // not_found above all
			return nil, &WaitError{Collection: w.collection, ID: w.id, LastState: last.State, Object: last, Err: err}
		}
	}
	// An ended ctx fails there at once, naming the last state.
	return w.c.waitStatic(ctx, w.collection, w.id, w.opts, last)
}

// next reads the answer's next line: the object, or the error that ended the server's wait.
func (w *Watch) next(ctx context.Context) (*Object, error) {
	body := w.body // Close may clear w.body while the AfterFunc runs
	stop := context.AfterFunc(ctx, func() { body.Close() })
	defer stop()
	var line json.RawMessage
	if err := w.dec.Decode(&line); err != nil {
		return nil, err
	}
	w.drain() // the second line is the last
	var env ErrorBody
	if err := json.Unmarshal(line, &env); err == nil && env.Error.Code != "" {
		return nil, errorOf(env, StatusOf(Code(env.Error.Code)))
	}
	o := new(Object)
	if err := json.Unmarshal(line, o); err != nil {
		return nil, err
	}
	return o, nil
}

// drain reads the answer to its end, which follows its last line at once, and closes it: a
// connection read to the end is used again.
func (w *Watch) drain() {
	if w.body != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(w.body, maxErrorBytes))
		w.Close()
	}
}

// Close drops the rest of the answer; the server's wait ends with it.
func (w *Watch) Close() {
	if w.body != nil {
		w.body.Close()
		w.body, w.dec = nil, nil
	}
}
