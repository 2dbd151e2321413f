package source

import (
	"strings"
	"testing"
)

func TestEraseStep(t *testing.T) {
	code := "const xs: string[] = [\"a\"];\nconst n = await f(xs as any);\n  return n satisfies number;"
	js, m, lf := EraseStep(code)
	if lf != nil {
		t.Fatal(lf.Message)
	}
	if strings.Contains(js, "string[]") || strings.Contains(js, "satisfies") || !strings.Contains(js, "return n") {
		t.Fatalf("erased %q", js)
	}
	// Line 3 of the erased step is line 3 of the source.
	lines := strings.Split(js, "\n")
	col := strings.Index(lines[2], "return") + 1
	if l, c := m.Position(3, col); l != 3 || c != 3 {
		t.Errorf("position %d:%d, want 3:3 (%q)", l, c, js)
	}
	// A syntax error's position is in the step.
	if _, _, lf := EraseStep("let a = 1;\nconst x: = 1"); lf == nil || lf.Line != 2 || lf.Col != 10 {
		t.Errorf("failure %+v", lf)
	}
	// Code that nests deeper than any program never reaches esbuild.
	if _, _, lf := EraseStep(strings.Repeat("(", 5000)); lf == nil || !strings.Contains(lf.Message, "nests too deeply") {
		t.Errorf("failure %+v", lf)
	}
}

func TestEraseModule(t *testing.T) {
	js, m, lf := EraseModule("import type { T } from \"./t\";\nconst a: number = 1;\nexport default a")
	if lf != nil || strings.Contains(js, "import") || !strings.Contains(js, "as default") {
		t.Fatalf("erased %q %+v", js, lf)
	}
	if l, _ := m.Position(2, 1); l != 3 {
		t.Errorf("line %d, want 3 (%q)", l, js)
	}
}
