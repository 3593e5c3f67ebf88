package web

import (
	"io"
	"path"
	"strconv"
	"sync"
)

// smallFile is the largest file that ServeStatic sends together with its
// header in one write. Bigger files are streamed after the header, so a
// worker's memory does not grow with the files it serves.
const smallFile = 16 << 10

// contentType is the Content-Type for a file name: the original server knows
// four.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html"
	case ".gif":
		return "image/gif"
	case ".jpg":
		return "image/jpeg"
	default:
		return "text/plain"
	}
}

// appendStaticHeader appends the header of a 200 response for a file of size
// bytes and the given type, exactly as docs/protocols.md §4 spells it.
func appendStaticHeader(b []byte, size int64, ctype string) []byte {
	b = append(b, "HTTP/1.0 200 OK\r\nServer: OSTEP WebServer\r\nContent-Length: "...)
	b = strconv.AppendInt(b, size, 10)
	b = append(b, "\r\nContent-Type: "...)
	b = append(b, ctype...)
	return append(b, "\r\n\r\n"...)
}

// responseBufs recycles the buffers of small responses: one per worker at a
// time, instead of one allocation per request.
var responseBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512+smallFile); return &b }}

// ServeStatic writes the 200 response for t, a regular file: the header, then
// exactly Info.Size() bytes of it.
//
// A small file goes out with its header in a single write (one system call,
// one TCP segment). A larger one is streamed with io.CopyN, which on a TCP
// connection becomes sendfile(2): the kernel copies the file to the socket
// and the file is never in the server's memory.
func ServeStatic(w io.Writer, t *Target) error {
	size := t.Info.Size()
	bp := responseBufs.Get().(*[]byte)
	defer responseBufs.Put(bp)
	buf := appendStaticHeader((*bp)[:0], size, contentType(t.Name))
	if size <= smallFile {
		head := len(buf)
		buf = buf[:head+int(size)]
		if _, err := io.ReadFull(t.File, buf[head:]); err != nil {
			return err // the file shrank under us; the client sees a short body
		}
		_, err := w.Write(buf)
		return err
	}
	if err := writeHeadMore(w, buf); err != nil { // held back to share the file's first segment
		return err
	}
	_, err := io.CopyN(w, t.File, size)
	return err
}
