//go:build !linux

package early

func ownMemory(string) string { return "" }
