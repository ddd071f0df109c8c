package natsauth

import (
	"errors"
	"fmt"
	"os"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/sharetree/sharetree/subjects"
)

// ErrSeed is wrapped by every error about an nkey seed file.
var ErrSeed = errors.New("natsauth: bad nkey seed file")

// Key is a user's nkey, read from its seed file.
type Key struct {
	kp  nkeys.KeyPair
	pub string
}

// ReadSeed reads a user's nkey seed from path (the seed alone, as
// `sharetree nkey` writes it, or a decorated credentials file).
func ReadSeed(path string) (*Key, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSeed, err)
	}
	kp, err := nkeys.ParseDecoratedNKey(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSeed, path, err)
	}
	return fromPair(kp, path)
}

// NewKey makes a new user nkey (its seed only in memory).
func NewKey() (*Key, error) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	return fromPair(kp, "a new key")
}

func fromPair(kp nkeys.KeyPair, what string) (*Key, error) {
	pub, err := kp.PublicKey()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrSeed, what, err)
	}
	if !nkeys.IsValidPublicUserKey(pub) {
		return nil, fmt.Errorf("%w: %s: %s is not a user key (its seed starts with SU)", ErrSeed, what, pub)
	}
	return &Key{kp: kp, pub: pub}, nil
}

// Public is the key's public key, which the auth file lists.
func (k *Key) Public() string { return k.pub }

// Seed is the key's seed, for its seed file.
func (k *Key) Seed() ([]byte, error) { return k.kp.Seed() }

// Option presents the key to the NATS server.
func (k *Key) Option() nats.Option {
	return nats.Nkey(k.pub, func(nonce []byte) ([]byte, error) { return k.kp.Sign(nonce) })
}

// ClientOptions are a client's connection options with key: the key, and
// the client's own inbox.
func ClientOptions(k *Key) ([]nats.Option, error) {
	inbox, err := subjects.ClientInbox(k.pub)
	if err != nil {
		return nil, err
	}
	return []nats.Option{k.Option(), nats.CustomInboxPrefix(inbox)}, nil
}

// AgentOptions are node's agent's connection options with key (nil: no
// key): the key, and the node's own inbox.
func AgentOptions(node string, k *Key) ([]nats.Option, error) {
	inbox, err := subjects.AgentInbox(node)
	if err != nil {
		return nil, err
	}
	opts := []nats.Option{nats.CustomInboxPrefix(inbox)}
	if k != nil {
		opts = append(opts, k.Option())
	}
	return opts, nil
}
