//go:build !linux || airlock_anonmem

package wasmvm

// trim: elsewhere than Linux a sandbox's memory is its own, not a mapping
// of the image; nothing is given back.
func (m *linearMemory) trim() []span { return nil }

func (m *linearMemory) untrim([]span) {}
