package serveconfig

import (
	"fmt"
	"time"
)

// fileConfig is the file's TOML as written (docs/serve-config.md).
type fileConfig struct {
	Listen            any                     `toml:"listen"` // a string or a list of strings
	ClientKeys        fileClientKeys          `toml:"client_keys"`
	InsecureOpenRelay bool                    `toml:"insecure_open_relay"`
	Store             string                  `toml:"store"`
	DefaultModel      string                  `toml:"default_model"`
	ToolFormat        string                  `toml:"tool_format"`
	Followups         string                  `toml:"followups"`
	MaxFollowupRounds int                     `toml:"max_followup_rounds"`
	Timeouts          fileTimeouts            `toml:"timeouts"`
	Upstreams         map[string]fileUpstream `toml:"upstreams"`
	Models            []fileModel             `toml:"models"`
	Stages            []map[string]any        `toml:"stage"` // kind and the kind's options
}

type fileClientKeys struct {
	Env  string `toml:"env"`
	File string `toml:"file"`
}

type fileTimeouts struct {
	UpstreamHeader *duration `toml:"upstream_header"`
	UpstreamIdle   *duration `toml:"upstream_idle"`
	ShutdownGrace  *duration `toml:"shutdown_grace"`
}

type fileUpstream struct {
	BaseURL       string            `toml:"base_url"`
	Wire          string            `toml:"wire"`
	APIKeyEnv     string            `toml:"api_key_env"`
	APIKeyFile    string            `toml:"api_key_file"`
	Headers       map[string]string `toml:"headers"`
	HeaderTimeout *duration         `toml:"header_timeout"`
	IdleTimeout   *duration         `toml:"idle_timeout"`
	MaxConns      int               `toml:"max_conns"`
	MaxIdleConns  int               `toml:"max_idle_conns"`

	MaxAnswerBytes      int64 `toml:"max_answer_bytes"`
	MaxBodyBytes        int64 `toml:"max_body_bytes"`
	MaxCompressionRatio int64 `toml:"max_compression_ratio"`
}

type fileModel struct {
	Name           string            `toml:"name"`
	Upstreams      []string          `toml:"upstreams"`
	UpstreamModel  string            `toml:"upstream_model"`
	UpstreamModels map[string]string `toml:"upstream_models"`
	Harness        string            `toml:"harness"`

	When              string `toml:"when"`
	LongContextTokens int64  `toml:"long_context_tokens"`

	Reasoning       *string           `toml:"reasoning"`
	Efforts         []string          `toml:"efforts"`
	MaxOutputTokens *int64            `toml:"max_output_tokens"`
	Variants        map[string]string `toml:"variants"`
	ToolsInPrompt   *bool             `toml:"tools_in_prompt"`
	ToolFormat      *string           `toml:"tool_format"`
	MaxTokensField  *string           `toml:"max_tokens_field"`
	PromptCacheKey  *bool             `toml:"prompt_cache_key"`
	Metadata        *bool             `toml:"metadata"`
	Unsupported     []string          `toml:"unsupported"`
	ThinkingOpen    *bool             `toml:"thinking_open"`
}

// duration is a Go duration string in the file ("90s", "2m").
type duration struct{ d time.Duration }

// UnmarshalText reads a Go duration ("30s", "2m", "1h30m").
func (d *duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("want a duration such as \"30s\" or \"2m\": %w", err)
	}
	d.d = v
	return nil
}
