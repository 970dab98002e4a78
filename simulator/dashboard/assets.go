package dashboard

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"strings"
)

// assetServer serves the embedded assets. A file stored gzipped (name.gz: the Mermaid
// bundle) is sent as it is to browsers that accept gzip and unpacked for the others.
func assetServer(files fs.FS) http.Handler {
	plain := http.FileServerFS(files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		gz, err := fs.ReadFile(files, name+".gz")
		if err != nil {
			plain.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
		w.Header().Set("Vary", "Accept-Encoding")
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(gz)
			return
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = io.Copy(w, zr) //nolint:gosec // our own embedded file, of known size
	})
}
