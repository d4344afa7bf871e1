package littlecoder

import "testing"

func TestHasWord(t *testing.T) {
	tests := []struct {
		text, word string
		want       bool
	}{
		{"open the url", "url", true},
		{"two urls here", "url", true},
		{"use curl", "url", false},
		{"url", "url", true},
		{"(url)", "url", true},
		{"urlencode it", "url", false},
		{"a javascript bug", "javascript", true},
		{"the webpage.", "webpage", true},
		{"webpages", "webpage", true},
		{"xsslint", "xss", false},
		{"no browser", "browser", true},
		{"curl then url", "url", true},
		{"", "url", false},
	}
	for _, tt := range tests {
		if got := hasWord(tt.text, tt.word); got != tt.want {
			t.Errorf("hasWord(%q, %q) = %v, want %v", tt.text, tt.word, got, tt.want)
		}
	}
}
