//go:build !judge

package web_test

import (
	"bufio"

	web "serverlab/solutions/06"
	"serverlab/tests/testkit"
	"serverlab/tests/webtest"
	"serverlab/tools/given/lab"
)

// The chapter's Impl values: the code under test, in this process under
// go test, in the subject under tools/cmd/grade (see tests/judge).

// impl hands this chapter's package to the suite in tests/webtest.
var impl = webtest.Impl{
	ReadRequest: func(r *bufio.Reader) (webtest.Request, error) {
		req, err := web.ReadRequest(r)
		if err != nil {
			return webtest.Request{}, err
		}
		return webtest.Request{Method: req.Method, URI: req.URI, Version: req.Version, Header: req.Header}, nil
	},
	Status: web.StatusCode,
	Resolve: func(root, uri string) (webtest.Resolved, error) {
		docs, err := web.OpenDocroot(root)
		if err != nil {
			return webtest.Resolved{}, err
		}
		defer docs.Close()
		t, err := docs.Open(uri)
		if err != nil {
			return webtest.Resolved{}, err
		}
		defer t.Close()
		return webtest.Resolved{Path: t.Path, Query: t.Query, CGI: t.CGI, Size: t.Info.Size(), Info: t.Info}, nil
	},
	NewHandler: func(c webtest.Config) (webtest.Handler, error) { return web.NewHandler(config(c)) },
	NewServer:  func(c webtest.Config) (lab.Server, error) { return web.New(config(c)) },
}

// config translates the suite's settings into the chapter's Config.
func config(c webtest.Config) web.Config {
	policy := web.FIFO
	if c.SFF {
		policy = web.SFF
	}
	log := c.Logger
	if log == nil {
		log = testkit.Logger()
	}
	return web.Config{
		Root: c.Root, Threads: c.Threads, Buffers: c.Buffers, Policy: policy, AgeRate: c.AgeRate,
		ReadTimeout: c.ReadTimeout, WriteTimeout: c.WriteTimeout, CGITimeout: c.CGITimeout,
		Logger: log, Queued: c.Queued, Started: c.Started,
	}
}
