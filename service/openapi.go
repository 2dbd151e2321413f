package service

import (
	_ "embed"
	"net/http"
)

// openAPI is the OpenAPI 3.1 document of the API, served at /openapi.json:
// clients in any language can be generated from it. TestOpenAPIRoutes and
// TestOpenAPITypes hold it to the handlers and to the Go types they encode.
//
//go:embed openapi.json
var openAPI []byte

func serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	if !allowMethod(w, r, http.MethodGet) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(openAPI)
}
