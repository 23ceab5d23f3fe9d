package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestContainerImage builds deploy/Containerfile with podman or buildah,
// as deploy/build-image.sh does, and checks the image: a static barberd
// that runs on the empty base, serving by default as an unprivileged user.
// Without a builder it skips and says why.
func TestContainerImage(t *testing.T) {
	t.Parallel()
	builder := ""
	for _, b := range []string{"podman", "buildah"} {
		if _, err := exec.LookPath(b); err == nil {
			builder = b
			break
		}
	}
	if builder == "" {
		t.Skip("neither podman nor buildah is installed (Debian packages podman, buildah): the container image is not built")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tag := "localhost/barberd-test:" + strings.ToLower(time.Now().Format("20060102t150405.000000000"))
	tag = strings.ReplaceAll(tag, ".", "")
	script, err := filepath.Abs("../../deploy/build-image.sh")
	if err != nil {
		t.Fatal(err)
	}
	build := exec.CommandContext(ctx, script, tag)
	build.Env = append(childEnv(), "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build-image.sh: %v\n%s", err, out)
	}
	rmi := []string{"rmi", "-f", tag}
	t.Cleanup(func() { _ = exec.Command(builder, rmi...).Run() })

	out, err := exec.CommandContext(ctx, builder, "inspect", "--type", "image", tag).Output()
	if err != nil {
		t.Fatalf("%s inspect: %v", builder, err)
	}
	var img []struct{ Config imageConfig }
	var bimg struct{ OCIv1 struct{ Config imageConfig } }
	if json.Unmarshal(out, &img) == nil && len(img) == 1 {
		bimg.OCIv1.Config = img[0].Config // podman's form
	} else if err := json.Unmarshal(out, &bimg); err != nil {
		t.Fatalf("inspect: %v\n%s", err, out)
	}
	c := bimg.OCIv1.Config
	if strings.Join(c.Entrypoint, " ") != "/barberd" || strings.Join(c.Cmd, " ") != "serve" || c.User != "65534:65534" {
		t.Errorf("image config: %+v", c)
	}

	// The image's binary runs without anything from a base image.
	ctr, err := exec.CommandContext(ctx, builder, "from", tag).Output()
	if err != nil {
		t.Fatalf("%s from: %v", builder, err)
	}
	name := strings.TrimSpace(string(ctr))
	t.Cleanup(func() { _ = exec.Command(builder, "rm", name).Run() })
	mnt, err := exec.CommandContext(ctx, builder, "mount", name).Output()
	if err != nil {
		t.Skipf("%s mount (needs root or an unshare session) failed: %v; the image was built", builder, err)
	}
	root := strings.TrimSpace(string(mnt))
	t.Cleanup(func() { _ = exec.Command(builder, "umount", name).Run() })
	if _, err := os.Stat(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt")); err != nil {
		t.Errorf("the image has no CA certificates for https webhooks: %v", err)
	}
	v, err := exec.CommandContext(ctx, filepath.Join(root, "barberd"), "--version").Output()
	if err != nil || !strings.HasPrefix(string(v), "barberd ") {
		t.Errorf("the image's barberd --version: %v %q", err, v)
	}
	if f, err := exec.CommandContext(ctx, "file", filepath.Join(root, "barberd")).Output(); err == nil && !strings.Contains(string(f), "statically linked") {
		t.Errorf("the image's barberd is not static: %s", f)
	}
}

type imageConfig struct {
	Entrypoint, Cmd []string
	User            string
}
