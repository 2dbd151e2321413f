//go:build !linux

package early

func childMemory(string) string { return "" }
