package webhook_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"barberd/webhook"
)

// A receiver checks a delivery barberd signed with a Standard Webhooks
// library, on the raw body. The lines between the markers are the Go lines
// docs/webhooks.md shows (TestDocsVerifyExample keeps them the same).
func Example_verify() {
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("twenty-four secret bytes"))
	body := []byte(`{"id":"ntf_01","type":"appointment.created"}`)
	ts := time.Now().Unix()
	sig, _ := webhook.Sign(secret, "ntf_01", ts, body)
	r := httptest.NewRequest("POST", "/barberd-hook", bytes.NewReader(body))
	r.Header.Set("webhook-id", "ntf_01")
	r.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	r.Header.Set("webhook-signature", sig)

	fmt.Println("genuine:", verify(secret, body, r) == nil)
	fmt.Println("altered body:", verify(secret, append(body, ' '), r) == nil)
	// Output:
	// genuine: true
	// altered body: false
}

// verify is what a receiver's handler runs on a delivery's raw body.
func verify(secret string, body []byte, r *http.Request) error {
	// docs: begin
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err // the secret is not whsec_<base64>
	}
	return wh.Verify(body, r.Header) // nil: genuine; otherwise refuse the request
	// docs: end
}

// The Go lines docs/webhooks.md gives for verifying a signature are those
// of Example_verify, which runs: its import, and the lines between its
// markers.
func TestDocsVerifyExample(t *testing.T) {
	docs, err := os.ReadFile("../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(docs), "```go\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("docs/webhooks.md has no Go example")
	}
	_, marked, _ := strings.Cut(string(src), "// docs: begin\n")
	marked, _, _ = strings.Cut(marked, "// docs: end")
	var want []string
	for _, l := range strings.Split(marked, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			want = append(want, l)
		}
	}
	var got []string
	for _, l := range strings.Split(block, "\n") {
		l = strings.TrimSpace(l)
		if imp, ok := strings.CutPrefix(l, "import "); ok {
			if !strings.Contains(string(src), "\t"+imp+"\n") {
				t.Errorf("docs import %q, the example does not", imp)
			}
			continue
		}
		if l != "" {
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/webhooks.md's Go lines:\n%s\nthe example's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
