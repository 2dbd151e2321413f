package agent

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/airlockrun/airlock"
	_ "modernc.org/sqlite" // the embedded database of the default store
)

// An Artifact is data an agent stored to use later, by ID.
type Artifact struct {
	ArtifactInfo
	Data json.RawMessage `json:"data"`
}

// ArtifactInfo is an artifact without its data.
type ArtifactInfo struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	Description *string   `json:"description"` // nil when none was given
	CreatedAt   time.Time `json:"createdAt"`
}

// An ArtifactStore keeps artifacts. The sandbox's storeArtifact,
// listArtifacts and getArtifact and the artifact.* tools use one.
type ArtifactStore interface {
	// Store keeps data and returns its new ID. typ "" means "json".
	Store(ctx context.Context, typ, description string, data json.RawMessage) (string, error)
	// List returns every artifact's metadata, oldest first.
	List(ctx context.Context) ([]ArtifactInfo, error)
	// Get returns an artifact; a missing one is ErrArtifactNotFound.
	Get(ctx context.Context, id string) (*Artifact, error)
}

// ErrArtifactNotFound is the error of Get for an unknown ID.
var ErrArtifactNotFound = errors.New("artifact not found")

// SQLiteArtifacts is the default ArtifactStore: a table in an embedded
// SQLite database.
type SQLiteArtifacts struct {
	db *sql.DB
}

// OpenArtifacts opens (creating if needed) an artifact store in the SQLite
// database file at path; "" or ":memory:" keeps it in memory.
func OpenArtifacts(path string) (*SQLiteArtifacts, error) {
	memory := path == "" || path == ":memory:"
	if memory {
		path = ":memory:"
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return nil, fmt.Errorf("agent: open artifacts: %w", err)
	}
	if memory {
		db.SetMaxOpenConns(1) // each connection would have its own memory database
	}
	_, err = db.Exec(`CREATE TABLE IF NOT EXISTS artifact_artifacts (
		id TEXT PRIMARY KEY,
		type TEXT NOT NULL,
		description TEXT,
		data BLOB NOT NULL,
		created_at INTEGER NOT NULL
	)`)
	if err == nil {
		_, err = db.Exec(`PRAGMA busy_timeout = 5000`)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("agent: open artifacts: %w", err)
	}
	return &SQLiteArtifacts{db: db}, nil
}

// Close closes the database.
func (s *SQLiteArtifacts) Close() error { return s.db.Close() }

// Store keeps data as a new artifact.
func (s *SQLiteArtifacts) Store(ctx context.Context, typ, description string, data json.RawMessage) (string, error) {
	if typ == "" {
		typ = "json"
	}
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "art_" + hex.EncodeToString(b[:])
	var desc any
	if description != "" {
		desc = description
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO artifact_artifacts (id, type, description, data, created_at) VALUES (?, ?, ?, ?, ?)`,
		id, typ, desc, []byte(data), time.Now().UnixMicro())
	if err != nil {
		return "", fmt.Errorf("store artifact: %w", err)
	}
	return id, nil
}

// List returns the artifacts' metadata, oldest first.
func (s *SQLiteArtifacts) List(ctx context.Context) ([]ArtifactInfo, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, type, description, created_at FROM artifact_artifacts ORDER BY created_at, rowid`)
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	defer rows.Close()
	out := []ArtifactInfo{}
	for rows.Next() {
		var a ArtifactInfo
		var desc sql.NullString
		var created int64
		if err := rows.Scan(&a.ID, &a.Type, &desc, &created); err != nil {
			return nil, fmt.Errorf("list artifacts: %w", err)
		}
		if desc.Valid {
			a.Description = &desc.String
		}
		a.CreatedAt = time.UnixMicro(created).UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}

// Get returns an artifact with its data.
func (s *SQLiteArtifacts) Get(ctx context.Context, id string) (*Artifact, error) {
	var a Artifact
	var desc sql.NullString
	var created int64
	var data []byte
	err := s.db.QueryRowContext(ctx, `SELECT id, type, description, data, created_at FROM artifact_artifacts WHERE id = ?`, id).
		Scan(&a.ID, &a.Type, &desc, &data, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("artifact %q: %w", id, ErrArtifactNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("get artifact: %w", err)
	}
	if desc.Valid {
		a.Description = &desc.String
	}
	a.CreatedAt = time.UnixMicro(created).UTC()
	a.Data = data
	return &a, nil
}

// ArtifactTools are the classic-mode tools over a store: artifact.store,
// artifact.list and artifact.get.
func ArtifactTools(store ArtifactStore) []Tool {
	type storeIn struct {
		Type        string `json:"type,omitempty" jsonschema:"a type tag for the data; default json"`
		Description string `json:"description,omitempty" jsonschema:"what the data is, for later"`
		Data        any    `json:"data" jsonschema:"the data to store"`
	}
	type storeOut struct {
		ID string `json:"id" jsonschema:"the artifact's ID"`
	}
	type listIn struct{}
	type getIn struct {
		ID string `json:"id" jsonschema:"the artifact's ID"`
	}
	st := NewTool("artifact.store", "Store data as an artifact for later retrieval",
		func(ctx context.Context, in storeIn) (storeOut, error) {
			data, err := json.Marshal(in.Data)
			if err != nil {
				return storeOut{}, err
			}
			id, err := store.Store(ctx, in.Type, in.Description, data)
			return storeOut{ID: id}, err
		})
	st.InputSchema.Required = []string{"data"} // an any field infers no requirement of presence
	st.Examples = []Example{{Input: map[string]any{"description": "EU weather", "data": map[string]any{"oslo": 4}}, Output: map[string]any{"id": "art_5f2c9a0e1b7d4c36"}}}
	st.Errors = []string{"the store fails to write (the database's error)"}
	ls := NewTool("artifact.list", "List all stored artifacts with metadata",
		func(ctx context.Context, _ listIn) ([]ArtifactInfo, error) { return store.List(ctx) })
	gt := NewTool("artifact.get", "Get a stored artifact, with its data, by ID",
		func(ctx context.Context, in getIn) (*Artifact, error) { return store.Get(ctx, in.ID) })
	gt.Errors = []string{"no artifact has the ID"}
	return []Tool{st, ls, gt}
}

// RegisterArtifacts registers the artifact functions of the sandbox on an
// interpreter, as the artifact plugin does: storeArtifact(data,
// description?) returns the new ID, listArtifacts() the metadata of all,
// getArtifact(id) the data stored under id. A store's error is thrown in the
// sandbox.
func RegisterArtifacts(it *Interpreter, store ArtifactStore) error {
	fns := map[string]func(ctx context.Context, args json.RawMessage) (json.RawMessage, error){
		"storeArtifact": func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			var list []json.RawMessage
			if json.Unmarshal(args, &list) != nil || len(list) == 0 {
				return nil, errors.New("storeArtifact() expects data and an optional description")
			}
			var desc string
			if len(list) > 1 && string(list[1]) != "null" {
				if json.Unmarshal(list[1], &desc) != nil {
					return nil, errors.New("storeArtifact(): the description must be a string")
				}
			}
			id, err := store.Store(ctx, "json", desc, list[0])
			if err != nil {
				return nil, err
			}
			return json.Marshal(id)
		},
		"listArtifacts": func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			list, err := store.List(ctx)
			if err != nil {
				return nil, err
			}
			return json.Marshal(list)
		},
		"getArtifact": func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			id, ok := stringArg(args)
			if !ok {
				return nil, errors.New("getArtifact() expects an artifact ID string")
			}
			a, err := store.Get(ctx, id)
			if err != nil {
				return nil, err
			}
			return a.Data, nil
		},
	}
	for name, fn := range fns {
		if err := it.Register(name, airlock.JSONFunc(fn)); err != nil {
			return err
		}
	}
	for _, h := range ArtifactHelpers {
		if err := it.Document(h); err != nil {
			return err
		}
	}
	return nil
}
