package playground

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The committed npm files are the ones SHA256SUMS records (fetch-assets.sh
// checks those against npm), and the binary embeds exactly them.
func TestAssetsMatchSHA256SUMS(t *testing.T) {
	f, err := os.Open("assets/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS line %q", sc.Text())
		}
		b, err := os.ReadFile("assets/" + name)
		if err != nil {
			t.Fatal(err)
		}
		got := sha256.Sum256(b)
		if hex.EncodeToString(got[:]) != sum {
			t.Errorf("assets/%s does not match SHA256SUMS; run fetch-assets.sh", name)
		}
		if a := assets[name]; a != nil {
			listed++
			if a.hash != sum {
				t.Errorf("embedded %s does not match SHA256SUMS", name)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	// Every embedded asset but our own playground.js comes from npm.
	if want := len(assets) - 1; listed != want {
		t.Errorf("SHA256SUMS covers %d embedded assets, want %d", listed, want)
	}
}

func get(t *testing.T, h http.Handler, target string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func TestPage(t *testing.T) {
	h := Handler("/playground", "/graphql")
	for _, path := range []string{"/playground", "/playground/"} {
		resp := get(t, h, path)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("page Cache-Control %q", cc)
		}
		if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("page CSP %q", resp.Header.Get("Content-Security-Policy"))
		}
		html := string(body)
		// Offline: the page names no other origin; every src and href is
		// one of our assets (or the empty data: icon).
		if m := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9]`).FindString(html); m != "" {
			t.Errorf("page refers to another origin: %q", m)
		}
		refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllStringSubmatch(html, -1)
		if len(refs) != 6 {
			t.Errorf("page has %d src/href, want 6 (css, icon, 4 scripts)", len(refs))
		}
		for _, r := range refs {
			if r[1] != "data:," && !strings.HasPrefix(r[1], "/playground/assets/") {
				t.Errorf("page loads %q, not from /playground/assets/", r[1])
			}
		}
		if !strings.Contains(html, `data-endpoint="/graphql"`) ||
			!strings.Contains(html, `data-default-headers="{&#34;X-Service-Api-Key&#34;: &#34;&#34;}"`) {
			t.Errorf("page lacks the endpoint or the default headers:\n%s", html)
		}
	}
	if resp := get(t, h, "/playground/other"); resp.StatusCode != 404 {
		t.Errorf("GET /playground/other: %d", resp.StatusCode)
	}
	req := httptest.NewRequest("POST", "/playground", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /playground: %d", rec.Code)
	}
}

func TestAssets(t *testing.T) {
	h := Handler("/playground", "/graphql")
	types := map[string]string{
		"graphiql.min.js":             "text/javascript; charset=utf-8",
		"graphiql.min.css":            "text/css; charset=utf-8",
		"react.production.min.js":     "text/javascript; charset=utf-8",
		"react-dom.production.min.js": "text/javascript; charset=utf-8",
		"playground.js":               "text/javascript; charset=utf-8",
	}
	if len(assets) != len(types) {
		t.Errorf("%d assets embedded, want %d", len(assets), len(types))
	}
	for name, ct := range types {
		a := assets[name]
		if a == nil {
			t.Fatalf("%s not embedded", name)
		}
		url := "/playground/assets/" + name + "?v=" + a.hash[:16]
		resp := get(t, h, url)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ct || string(body) != string(a.body) {
			t.Errorf("GET %s: %d %q, %d bytes", url, resp.StatusCode, resp.Header.Get("Content-Type"), len(body))
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("%s: Cache-Control %q", url, cc)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", url)
		}
		// Without the version, or with another, the URL may change content:
		// revalidate.
		for _, u := range []string{"/playground/assets/" + name, "/playground/assets/" + name + "?v=0123456789abcdef"} {
			if cc := get(t, h, u).Header.Get("Cache-Control"); cc != "no-cache" {
				t.Errorf("%s: Cache-Control %q", u, cc)
			}
		}
		// Revalidation answers 304.
		if resp := get(t, h, url, "If-None-Match", resp.Header.Get("ETag")); resp.StatusCode != http.StatusNotModified {
			t.Errorf("%s with its ETag: %d", url, resp.StatusCode)
		}
	}

	// gzip for clients that take it.
	a := assets["graphiql.min.js"]
	resp := get(t, h, "/playground/assets/graphiql.min.js", "Accept-Encoding", "gzip, br")
	if resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("no gzip: %v", resp.Header)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(zr)
	if string(body) != string(a.body) {
		t.Error("gzipped graphiql.min.js differs")
	}
	if resp := get(t, h, "/playground/assets/graphiql.min.js", "Accept-Encoding", "gzip;q=0"); resp.Header.Get("Content-Encoding") != "" {
		t.Error("gzip;q=0 got gzip")
	}
	if resp := get(t, h, "/playground/assets/nope.js"); resp.StatusCode != 404 {
		t.Errorf("unknown asset: %d", resp.StatusCode)
	}
	if resp := get(t, h, "/playground/assets/SHA256SUMS"); resp.StatusCode != 404 {
		t.Errorf("SHA256SUMS served: %d", resp.StatusCode)
	}
}
