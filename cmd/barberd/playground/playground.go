// Package playground serves a GraphiQL page whose scripts and styles are
// embedded in the binary, so it works with no network besides the server:
// no CDN, no web fonts (GraphiQL's fonts are data: URLs in its CSS).
//
// assets/ holds the npm registry's files at pinned versions, fetched by
// fetch-assets.sh and checked against assets/SHA256SUMS; index.html and
// playground.js are ours.
package playground

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"
)

//go:embed assets/*.js assets/*.css playground.js
var files embed.FS

//go:embed index.html
var indexHTML string

var page = template.Must(template.New("index.html").Parse(indexHTML))

// csp keeps the page to its own origin: scripts, styles and connections to
// the server only; fonts and icons may also be data: URLs.
const csp = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// DefaultHeaders is what the headers editor starts with, for the developer
// to paste a key into.
const DefaultHeaders = `{"X-Service-Api-Key": ""}`

type asset struct {
	contentType string
	body        []byte
	hash        string // hex SHA-256 of body, the ?v= of its URL and its ETag

	gzOnce sync.Once
	gz     []byte // body gzipped, made on first use; nil when it would not be smaller
}

var assets = func() map[string]*asset {
	m := map[string]*asset{}
	err := fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := "text/javascript; charset=utf-8"
		if path.Ext(p) == ".css" {
			ct = "text/css; charset=utf-8"
		}
		m[path.Base(p)] = &asset{contentType: ct, body: b, hash: hex.EncodeToString(sum[:])}
		return nil
	})
	if err != nil {
		panic(err)
	}
	return m
}()

func (a *asset) gzipped() []byte {
	a.gzOnce.Do(func() {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(a.body)
		_ = zw.Close()
		if buf.Len() < len(a.body) {
			a.gz = buf.Bytes()
		}
	})
	return a.gz
}

// Handler serves the playground page at base (and base+"/") and its assets
// under base+"/assets/", running queries against endpoint. Mount it at base,
// e.g. r.Mount("/playground", playground.Handler("/playground", "/graphql")).
func Handler(base, endpoint string) http.Handler {
	base = strings.TrimSuffix(base, "/")
	url := func(name string) string { return base + "/assets/" + name + "?v=" + assets[name].hash[:16] }
	var html bytes.Buffer
	err := page.Execute(&html, map[string]string{
		"Endpoint":       endpoint,
		"DefaultHeaders": DefaultHeaders,
		"CSS":            url("graphiql.min.css"),
		"React":          url("react.production.min.js"),
		"ReactDOM":       url("react-dom.production.min.js"),
		"GraphiQL":       url("graphiql.min.js"),
		"Playground":     url("playground.js"),
	})
	if err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		switch p := r.URL.Path; {
		case p == base || p == base+"/":
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-cache")
			h.Set("Content-Security-Policy", csp)
			h.Set("Referrer-Policy", "no-referrer")
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(html.Bytes()))
		case strings.HasPrefix(p, base+"/assets/"):
			a := assets[strings.TrimPrefix(p, base+"/assets/")]
			if a == nil {
				http.NotFound(w, r)
				return
			}
			serveAsset(w, r, a)
		default:
			http.NotFound(w, r)
		}
	})
}

func serveAsset(w http.ResponseWriter, r *http.Request, a *asset) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	// The page asks for each asset with ?v= its hash, so a URL's content
	// never changes and may be cached for good; other URLs revalidate.
	if v := r.URL.Query().Get("v"); v != "" && strings.HasPrefix(a.hash, v) && len(v) >= 16 {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	h.Add("Vary", "Accept-Encoding")
	body, etag := a.body, `"`+a.hash+`"`
	if acceptsGzip(r) {
		if gz := a.gzipped(); gz != nil {
			body, etag = gz, `"`+a.hash+`-gz"`
			h.Set("Content-Encoding", "gzip")
		}
	}
	h.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			return strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0"
		}
	}
	return false
}
