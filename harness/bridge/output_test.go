package bridge

import "testing"

func TestUnwrapOutput(t *testing.T) {
	tests := map[string]struct {
		text    string
		out     string
		code    int
		hasExit bool
		ok      bool
	}{
		"codex":                {"Chunk ID: c3196a\nWall time: 0.0009 seconds\nProcess exited with code 0\nOriginal token count: 0\nOutput:\nhello\n", "hello\n", 0, true, true},
		"exit 2":               {"Chunk ID: 1\nWall time: 1.5 seconds\nProcess exited with code 2\nOriginal token count: 12\nOutput:\nboom\nerr\n", "boom\nerr\n", 2, true, true},
		"running":              {"Chunk ID: 9\nWall time: 10.0 seconds\nProcess running with session ID 3\nOriginal token count: 4\nOutput:\npartial", "partial", 0, false, true},
		"no chunk id":          {"Wall time: 0.1 seconds\nProcess exited with code 1\nOutput:\nx\n", "x\n", 1, true, true},
		"only chunk id":        {"Chunk ID: 9\nOutput:\nhello from harnessflow\n", "hello from harnessflow\n", 0, false, true},
		"crlf":                 {"Chunk ID: a\r\nWall time: 0 seconds\r\nProcess exited with code 0\r\nOutput:\r\nline\r\n", "line\r\n", 0, true, true},
		"empty output":         {"Chunk ID: a\nProcess exited with code 0\nOutput:\n", "", 0, true, true},
		"no newline":           {"Chunk ID: a\nProcess exited with code 0\nOutput:", "", 0, true, true},
		"output keeps Output:": {"Process exited with code 0\nOutput:\nOutput:\nChunk ID: x\n", "Output:\nChunk ID: x\n", 0, true, true},
		"negative code":        {"Process exited with code -1\nOutput:\n", "", -1, true, true},
		"old shell":            {"Exit code: 127\nWall time: 0.2 seconds\nTotal output lines: 1\nOutput:\nnot found\n", "not found\n", 127, true, true},
		"plain":                {"hello\n", "hello\n", 0, false, false},
		"empty":                {"", "", 0, false, false},
		"output only":          {"Output:\nx", "Output:\nx", 0, false, false},
		"unknown header":       {"Chunk ID: a\nSomething: else\nOutput:\nx", "Chunk ID: a\nSomething: else\nOutput:\nx", 0, false, false},
		"bad exit code":        {"Process exited with code zero\nOutput:\nx", "Process exited with code zero\nOutput:\nx", 0, false, false},
		"no Output line":       {"Chunk ID: a\nWall time: 1 seconds\n", "Chunk ID: a\nWall time: 1 seconds\n", 0, false, false},
		"blank header":         {"Chunk ID: a\n\nOutput:\nx", "Chunk ID: a\n\nOutput:\nx", 0, false, false},
		"Output: indent":       {"Chunk ID: a\n Output:\nx", "Chunk ID: a\n Output:\nx", 0, false, false},
	}
	for name, tc := range tests {
		out, code, hasExit, ok := UnwrapOutput(tc.text)
		if out != tc.out || code != tc.code || hasExit != tc.hasExit || ok != tc.ok {
			t.Errorf("%s: got (%q, %d, %v, %v), want (%q, %d, %v, %v)", name, out, code, hasExit, ok, tc.out, tc.code, tc.hasExit, tc.ok)
		}
	}
}
