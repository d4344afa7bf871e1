// Package loadtest measures a streaming proxy under load: N concurrent
// streaming clients against a scripted upstream ([ProxyUpstream]), reached
// directly, through a plain reverse proxy ([PassThrough], the floor) or
// through the proxy under test, each event's latency being its receive time
// minus the send time the upstream stamped into it ([AppendStamp],
// [ParseStamp]). It is the library of the command `harnessflow-load`
// (cmd/harnessflow-load), which starts those processes on loopback ports.
//
// The processes (upstream, proxies) are the caller's: [RunLoad] only sends
// requests, reads /proc of the measured process ([ReadProcStats]) and
// samples its GET /debug/runtime ([RuntimeStats], which `harnessflow serve
// --debug-addr` serves). A [ProxyReport] gathers the runs of every target
// and N, relates them to the direct and the pass-through targets
// ([ProxyReport.Compare]), checks [ProxyGoals], and is written as Markdown,
// JSON or an SVG latency chart.
//
//	run, err := loadtest.RunLoad(ctx, loadtest.ProxyTarget{
//		Name: "serve native", URL: base + "/v1/responses", Stream: loadtest.StreamResponses,
//		Body: body, PID: pid, Debug: debugBase + "/debug/runtime",
//	}, loadtest.LoadOptions{Streams: 1000, Rounds: 2, Events: 60, Ramp: 3 * time.Second})
//
// The stream benchmarks of a pipeline graph (`harnessflow bench`) are
// package benchmark; this package uses its machine description and table
// writer.
package loadtest
