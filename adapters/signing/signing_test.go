package signing

import (
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestGeneratedOnceAndSharedByConcurrentLoaders(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	kids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := Load("", dir)
			if err != nil {
				t.Error(err)
				return
			}
			kids[i] = k.KeyID()
		}()
	}
	wg.Wait()
	for _, kid := range kids {
		if kid == "" || kid != kids[0] {
			t.Fatalf("loaders disagree on the key: %q", kids)
		}
	}
	info, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", info.Mode().Perm())
	}
	again, err := Load("", dir)
	if err != nil || again.KeyID() != kids[0] {
		t.Fatalf("reload: %v, kid %q want %q", err, again.KeyID(), kids[0])
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("data directory holds %d entries, want the key file alone", len(entries))
	}
}

func TestSignVerifiesOnlyWithTheSigningKey(t *testing.T) {
	k, err := Load("", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := Load("", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	token, err := k.Sign([]byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := PublicKeyOf(k.PublicJWK())
	if err != nil {
		t.Fatal(err)
	}
	payload, err := Verify([]byte(token), pub)
	if err != nil || string(payload) != `{"a":1}` {
		t.Fatalf("verify with own key: %q, %v", payload, err)
	}
	otherPub, err := PublicKeyOf(other.PublicJWK())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify([]byte(token), otherPub); err == nil {
		t.Fatal("a JWS verified with another key")
	}
	tampered := []byte(token)
	tampered[len(tampered)/2] ^= 1
	if _, err := Verify(tampered, pub); err == nil {
		t.Fatal("a tampered JWS verified")
	}
}

func TestConfiguredKeyInlineAndFromFile(t *testing.T) {
	dir := t.TempDir()
	generated, err := Load("", dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	fromFile, err := Load(path, "")
	if err != nil || fromFile.KeyID() != generated.KeyID() {
		t.Fatalf("from file: %v", err)
	}
	text, _ := os.ReadFile(path)
	inline, err := Load(string(text), "")
	if err != nil || inline.KeyID() != generated.KeyID() {
		t.Fatalf("inline: %v", err)
	}
	if _, err := Load("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----", ""); err == nil {
		t.Fatal("garbage PEM accepted")
	}
	if _, err := Load(filepath.Join(dir, "absent"), ""); err == nil {
		t.Fatal("a missing key file was accepted")
	}
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	k, err := New(priv)
	if err != nil || len(k.KeyID()) != 43 {
		t.Fatalf("New: %v, kid %q", err, k.KeyID())
	}
}
