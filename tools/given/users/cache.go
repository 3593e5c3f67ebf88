package users

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
)

// Cache is the users file as a chat server needs it: in memory, read once,
// then kept up to date by Refresh, which reads only what has been appended
// since (the discovery server appends while the chat server runs). A login
// then costs a stat and a map lookup, not a read of the whole file: with a
// file of thousands of users, re-reading it at every login made each login
// take seconds and let one registering client slow down every other.
//
// If the file is replaced or cut (it is another file, or shorter than what
// was read), Refresh reads it again from the start; until it has read all of
// it, lookups answer from what the cache held before. It is safe for
// concurrent use.
type Cache struct {
	path string
	log  *slog.Logger

	mu     sync.Mutex
	live   map[string]User // what Lookup answers from
	names  []string        // live's names, sorted; nil when it must be rebuilt
	next   map[string]User // a reload from the start, not finished yet; nil when none
	tail   *User           // a valid last line without '\n', not yet in the map
	tailOf []byte          // the bytes tail was parsed from, so it is parsed (and logged) once
	off    int64           // bytes of whole lines read (into next if reloading, else live)
	last   []byte          // the bytes just before off, as read: if they change, the file was rewritten
	file   fileID          // the file that off is an offset in
	p      *parser
}

// fileID tells one file from another that took its name.
type fileID struct{ dev, ino uint64 }

// NewCache returns a cache of the users file at path. It reads nothing yet:
// the first Refresh does.
func NewCache(path string, log *slog.Logger) *Cache {
	if log == nil {
		log = slog.Default()
	}
	log = log.With("file", path)
	return &Cache{path: path, log: log, live: map[string]User{}, p: newParser(log)}
}

// Refresh brings the cache up to date with the file: one stat when nothing
// changed, else a read of what is new. It reads at most budget bytes (0: no
// limit), so that a server that must not block long (an event loop) can
// spread a large read over several calls; what it has not read yet, the next
// call reads. A missing file is an empty store.
func (c *Cache) Refresh(budget int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	fh, err := os.Open(c.path)
	if errors.Is(err, os.ErrNotExist) {
		c.reset(fileID{}, map[string]User{})
		c.publish()
		return nil
	}
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	id := idOf(st)
	size := min(st.Size(), MaxFileSize)
	if id != c.file || size < c.off || !c.unchanged(fh) {
		c.reset(id, map[string]User{}) // replaced, cut or rewritten: read it again from the start
	}
	for c.off < size {
		n := size - c.off
		if budget > 0 {
			n = min(n, int64(max(budget, MaxLine)))
		}
		buf := make([]byte, n)
		got, err := fh.ReadAt(buf, c.off)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		used, rest := c.p.feed(buf[:got], c.add)
		c.off += int64(used)
		c.last = append(c.last, buf[:used]...)
		c.last = c.last[len(c.last)-min(len(c.last), checkBytes):]
		atEnd := c.off+int64(len(rest)) >= size
		if atEnd {
			c.keepTail(rest)
		}
		if budget > 0 || got == 0 || atEnd {
			break
		}
	}
	if c.off+int64(len(c.tailOf)) >= size {
		c.publish() // everything is read: a reload in progress is complete
	}
	return nil
}

// checkBytes is how many of the bytes already read Refresh reads again to
// tell an appended file from one rewritten in place (or replaced by a file
// that got the same inode number).
const checkBytes = 64

// unchanged reports whether the bytes just before c.off are still those read.
func (c *Cache) unchanged(fh *os.File) bool {
	if len(c.last) == 0 {
		return true
	}
	b := make([]byte, len(c.last))
	n, _ := fh.ReadAt(b, c.off-int64(len(b)))
	return n == len(b) && string(b) == string(c.last)
}

// reset starts reading the file id from its start, into a map of its own.
func (c *Cache) reset(id fileID, into map[string]User) {
	c.file, c.off, c.next, c.last = id, 0, into, nil
	c.tail, c.tailOf = nil, nil
	c.p = newParser(c.log)
}

// target is the map new lines go into.
func (c *Cache) target() map[string]User {
	if c.next != nil {
		return c.next
	}
	return c.live
}

// add records u; the first line for a name wins, as in Index.
func (c *Cache) add(u User) {
	m := c.target()
	if _, ok := m[u.Name]; ok {
		return
	}
	if len(m) >= MaxUsers {
		c.p.full()
		return
	}
	m[u.Name] = u
	if c.next == nil {
		c.names = nil
	}
}

// keepTail parses the bytes after the last '\n', which are the whole file's
// end: a valid user there counts, as it does for Read.
func (c *Cache) keepTail(rest []byte) {
	if string(rest) == string(c.tailOf) {
		return
	}
	c.tail, c.tailOf = nil, slices.Clone(rest)
	if u, ok := c.p.tail(rest); ok {
		c.tail = &u
	}
	c.names = nil
}

// publish makes a finished reload the live map.
func (c *Cache) publish() {
	if c.next != nil {
		c.live, c.next, c.names = c.next, nil, nil
	}
}

// Lookup returns the user registered under name.
func (c *Cache) Lookup(name string) (User, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u, ok := c.live[name]; ok {
		return u, true
	}
	if c.tail != nil && c.next == nil && c.tail.Name == name {
		return *c.tail, true
	}
	return User{}, false
}

// Names returns the registered names, sorted. The slice is shared: do not
// modify it.
func (c *Cache) Names() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.names == nil {
		c.names = make([]string, 0, len(c.live)+1)
		for name := range c.live {
			c.names = append(c.names, name)
		}
		if t := c.tail; t != nil && c.next == nil {
			if _, dup := c.live[t.Name]; !dup {
				c.names = append(c.names, t.Name)
			}
		}
		slices.Sort(c.names)
	}
	return c.names
}

// Path is the file the cache reads.
func (c *Cache) Path() string { return c.path }
