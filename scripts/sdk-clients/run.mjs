// run.mjs: real SDK clients against a running `harnessflow serve` (the
// scripted model of script.json behind it). Usage:
//
//   node run.mjs http://127.0.0.1:PORT/v1
//
// Each scenario prints "ok - NAME" or "not ok - NAME: why"; the last line
// is "N passed, M failed". The exit code is 1 when a scenario failed.
//
// The clients: the official openai Node SDK (streaming, the stream helper,
// non-streaming, a tool loop continued with previous_response_id, a
// max_output_tokens and temperature the upstream must receive) and the
// Vercel AI SDK's OpenAI Responses provider (streamText, generateText, the
// same with maxOutputTokens and temperature, and multi-step tool calls with
// its default store, which sends the earlier output back as item_reference
// items). The AI SDK checks every event and
// body with zod: a validation error fails the scenario.
import OpenAI from "openai";
import { accumulateResponse } from "openai/lib/responses/ResponseAccumulator";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText, tool, stepCountIs } from "ai";
import { z } from "zod";

const baseURL = process.argv[2];
if (!baseURL) {
  console.error("usage: node run.mjs BASE_URL (e.g. http://127.0.0.1:8787/v1)");
  process.exit(2);
}
const apiKey = "sk-sdk-clients-test";
const model = "scripted-model";
const client = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
const provider = createOpenAI({ baseURL, apiKey });

const weatherTool = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city.",
  parameters: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
    additionalProperties: false,
  },
  strict: true,
};
const weather = (city) => `sunny, 21 C in ${city}`;

function check(cond, what) {
  if (!cond) throw new Error(what);
}

// storeHits reads how many item references and previous responses the
// proxy resolved from its store (its /metrics).
async function storeHits() {
  const text = await (await fetch(baseURL.replace(/\/v1$/, "") + "/metrics")).text();
  const hits = {};
  for (const m of text.matchAll(/^harnessflow_store_lookups_total\{kind="([^"]+)",result="hit"\} (\d+)$/gm)) {
    hits[m[1]] = Number(m[2]);
  }
  return hits;
}

// checkEvents replays a raw event stream through the openai SDK's own
// accumulator and checks what the SDK's helpers rely on: one item open at
// a time (the reasoning is done before the message opens), each item's
// accumulated content equal to its done item (no duplicate or lost part),
// and item ids never seen before (unique per response, across responses).
const seenIDs = new Set();
function checkEvents(events) {
  let snapshot;
  let open = null;
  for (const ev of events) {
    if (ev.type === "response.output_item.added") {
      check(open === null, `item ${ev.item.id} added while ${open} is open`);
      check(!seenIDs.has(ev.item.id), `item id ${ev.item.id} seen before`);
      seenIDs.add(ev.item.id);
      open = ev.item.id;
    }
    if (ev.type === "response.output_item.done") {
      check(open === ev.item.id, `item ${ev.item.id} done, ${open} is open`);
      const acc = snapshot.output[ev.output_index];
      for (const k of ["content", "summary"]) {
        if (Array.isArray(ev.item[k])) {
          const got = (acc[k] ?? []).map((p) => `${p.type}:${p.text}`).join("|");
          const want = ev.item[k].map((p) => `${p.type}:${p.text}`).join("|");
          check(got === want, `${ev.item.type} ${k}: accumulated ${got}, done ${want}`);
        }
      }
      open = null;
    }
    snapshot = accumulateResponse(ev, snapshot);
  }
  return snapshot;
}

const scenarios = [];
const scenario = (name, fn) => scenarios.push({ name, fn });

// --- the openai SDK ---------------------------------------------------------

scenario("openai: responses.create stream:true", async () => {
  const stream = await client.responses.create({ model, input: "stream please", stream: true });
  const types = [];
  let text = "";
  let last;
  const events = [];
  for await (const ev of stream) {
    types.push(ev.type);
    events.push(ev);
    if (ev.type === "response.output_text.delta") text += ev.delta;
    last = ev;
  }
  checkEvents(events);
  check(types[0] === "response.created" && types[1] === "response.in_progress", `first events ${types.slice(0, 2)}`);
  check(last.type === "response.completed", `last event ${last.type}`);
  check(text === "Hello! You said: stream please", `streamed text ${JSON.stringify(text)}`);
  check(last.response.output_text === undefined || typeof last.response.output_text === "string", "output_text");
  check(last.response.usage && last.response.usage.total_tokens > 0, `usage ${JSON.stringify(last.response.usage)}`);
  for (const k of ["error", "incomplete_details", "instructions", "metadata", "parallel_tool_calls", "temperature", "tool_choice", "tools", "top_p"]) {
    check(k in last.response, `response object without ${k}`);
  }
});

scenario("openai: responses.stream helper + finalResponse", async () => {
  const stream = client.responses.stream({ model, input: "helper" });
  let deltas = "";
  stream.on("response.output_text.delta", (ev) => (deltas += ev.delta));
  const final = await stream.finalResponse();
  check(final.status === "completed", `status ${final.status}`);
  check(final.output_text === "Hello! You said: helper", `output_text ${JSON.stringify(final.output_text)}`);
  check(deltas === final.output_text, `deltas ${JSON.stringify(deltas)}`);
  const msgs = final.output.filter((o) => o.type === "message");
  check(msgs.length === 1 && msgs[0].content.length === 1, `message parts ${JSON.stringify(msgs.map((m) => m.content))}`);
});

scenario("openai: responses.create non-streaming", async () => {
  const resp = await client.responses.create({ model, input: "no stream" });
  check(resp.object === "response" && resp.status === "completed", `status ${resp.status}`);
  check(resp.output_text === "Hello! You said: no stream", `output_text ${JSON.stringify(resp.output_text)}`);
  check(resp.usage && resp.usage.output_tokens > 0, "usage");
  check(resp.parallel_tool_calls === true && resp.store === true, `parallel ${resp.parallel_tool_calls} store ${resp.store}`);
});

scenario("openai: tool loop with previous_response_id", async () => {
  const first = await client.responses.create({ model, input: "What is the weather in Paris?", tools: [weatherTool] });
  const call = first.output.find((o) => o.type === "function_call");
  check(call && call.name === "get_weather", `no call in ${JSON.stringify(first.output.map((o) => o.type))}`);
  const args = JSON.parse(call.arguments);
  const second = await client.responses.create({
    model,
    previous_response_id: first.id,
    tools: [weatherTool],
    input: [{ type: "function_call_output", call_id: call.call_id, output: weather(args.city) }],
  });
  check(second.output_text === "The weather tool said: sunny, 21 C in Paris", `answer ${JSON.stringify(second.output_text)}`);
  check(second.previous_response_id === first.id, "previous_response_id echoed");
});

scenario("openai: streamed tool loop, whole conversation (store:false)", async () => {
  const input = [{ role: "user", content: "Weather in Paris, please." }];
  const stream = client.responses.stream({ model, input, tools: [weatherTool], store: false });
  const events = [];
  stream.on("event", (ev) => events.push(ev));
  const first = await stream.finalResponse();
  const acc = checkEvents(events);
  check(acc.output.map((o) => o.type).join(",") === "reasoning,message,function_call", `items ${acc.output.map((o) => o.type)}`);
  check(first.store === false, `store ${first.store}`);
  const call = first.output.find((o) => o.type === "function_call");
  check(call, "no call");
  const second = await client.responses.create({
    model,
    store: false,
    tools: [weatherTool],
    input: [...input, ...first.output, { type: "function_call_output", call_id: call.call_id, output: weather("Paris") }],
  });
  check(second.output_text.includes("sunny, 21 C in Paris"), `answer ${JSON.stringify(second.output_text)}`);
});

// The limit and the sampling reach the model: the scripted upstream cuts
// the answer ("length") only when its chat body has max_tokens 16 and
// temperature 0.2, and the cut comes back as an incomplete response.
const limits = { max_output_tokens: 16, temperature: 0.2 };
function checkLimitsEcho(resp) {
  check(resp.status === "incomplete", `status ${resp.status}: ${JSON.stringify(resp.output_text ?? resp.output)}`);
  check(resp.incomplete_details?.reason === "max_output_tokens", `incomplete_details ${JSON.stringify(resp.incomplete_details)}`);
  check(resp.max_output_tokens === 16 && resp.temperature === 0.2, `echo max_output_tokens ${resp.max_output_tokens} temperature ${resp.temperature}`);
}

scenario("openai: max_output_tokens + temperature reach the model; a length cut is incomplete", async () => {
  const resp = await client.responses.create({ model, input: "tell me a long story", ...limits });
  checkLimitsEcho(resp);
  check(resp.output_text === "Once upon a time", `output_text ${JSON.stringify(resp.output_text)}`);
});

scenario("openai: streamed, a length cut ends with response.incomplete", async () => {
  const stream = await client.responses.create({ model, input: "tell me a long story", stream: true, ...limits });
  let last;
  let text = "";
  for await (const ev of stream) {
    if (ev.type === "response.output_text.delta") text += ev.delta;
    last = ev;
  }
  check(last.type === "response.incomplete", `last event ${last.type}`);
  checkLimitsEcho(last.response);
  check(text === "Once upon a time", `streamed text ${JSON.stringify(text)}`);
});

// --- the Vercel AI SDK --------------------------------------------------------

scenario("ai-sdk: generateText maxOutputTokens + temperature reach the model; finishReason length", async () => {
  const result = await generateText({ model: provider.responses(model), prompt: "tell me a long story", maxOutputTokens: 16, temperature: 0.2 });
  check(result.text === "Once upon a time", `text ${JSON.stringify(result.text)}`);
  check(result.finishReason === "length", `finish ${result.finishReason}`);
  check(result.warnings === undefined || result.warnings.length === 0, `warnings ${JSON.stringify(result.warnings)}`);
});

scenario("ai-sdk: streamText maxOutputTokens + temperature; finishReason length", async () => {
  const errors = [];
  const result = streamText({
    model: provider.responses(model),
    prompt: "tell me a long story",
    maxOutputTokens: 16,
    temperature: 0.2,
    onError: ({ error }) => errors.push(error),
  });
  let text = "";
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") text += part.text;
    if (part.type === "error") errors.push(part.error);
  }
  check(errors.length === 0, `errors: ${errors.map(String).join("; ")}`);
  check(text === "Once upon a time", `text ${JSON.stringify(text)}`);
  check((await result.finishReason) === "length", `finish ${await result.finishReason}`);
});

scenario("ai-sdk: streamText", async () => {
  const errors = [];
  const result = streamText({ model: provider.responses(model), prompt: "stream text", onError: ({ error }) => errors.push(error) });
  let text = "";
  for await (const part of result.fullStream) {
    if (part.type === "text-delta") text += part.text;
    if (part.type === "error") errors.push(part.error);
  }
  check(errors.length === 0, `errors: ${errors.map(String).join("; ")}`);
  check(text === "Hello! You said: stream text", `text ${JSON.stringify(text)}`);
  check((await result.finishReason) === "stop", `finish ${await result.finishReason}`);
  const usage = await result.usage;
  check(usage.totalTokens > 0, `usage ${JSON.stringify(usage)}`);
});

scenario("ai-sdk: generateText", async () => {
  const result = await generateText({ model: provider.responses(model), prompt: "generate text" });
  check(result.text === "Hello! You said: generate text", `text ${JSON.stringify(result.text)}`);
  check(result.finishReason === "stop", `finish ${result.finishReason}`);
});

const aiTools = {
  get_weather: tool({
    description: "The weather in a city.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => weather(city),
  }),
};

scenario("ai-sdk: generateText, multi-step tools, default store (item_reference)", async () => {
  const before = await storeHits();
  const result = await generateText({
    model: provider.responses(model),
    tools: aiTools,
    stopWhen: stepCountIs(4),
    prompt: "What is the weather in Paris?",
  });
  check(result.steps.length === 2, `${result.steps.length} steps`);
  check(result.steps[0].toolCalls.length === 1 && result.steps[0].toolCalls[0].toolName === "get_weather", "no tool call in step 1");
  check(result.text === 'The weather tool said: "sunny, 21 C in Paris"' || result.text.includes("sunny, 21 C in Paris"), `text ${JSON.stringify(result.text)}`);
  const after = await storeHits();
  check((after.item_reference ?? 0) > (before.item_reference ?? 0), `no item_reference resolved (${JSON.stringify(before)} → ${JSON.stringify(after)})`);
});

scenario("ai-sdk: streamText, multi-step tools, default store (item_reference)", async () => {
  const before = await storeHits();
  const errors = [];
  const result = streamText({
    model: provider.responses(model),
    tools: aiTools,
    stopWhen: stepCountIs(4),
    prompt: "Weather in Paris?",
    onError: ({ error }) => errors.push(error),
  });
  const kinds = new Set();
  for await (const part of result.fullStream) {
    kinds.add(part.type);
    if (part.type === "error") errors.push(part.error);
  }
  check(errors.length === 0, `errors: ${errors.map(String).join("; ")}`);
  // (The chat upstream's reasoning is raw reasoning text, which this AI SDK
  // version does not stream; it shows the reasoning item start and end.)
  for (const k of ["reasoning-start", "reasoning-end", "text-delta", "tool-call", "tool-result"]) check(kinds.has(k), `no ${k} part`);
  const steps = await result.steps;
  check(steps.length === 2, `${steps.length} steps`);
  check((await result.text).includes("sunny, 21 C in Paris"), `text ${JSON.stringify(await result.text)}`);
  const after = await storeHits();
  check((after.item_reference ?? 0) > (before.item_reference ?? 0), "no item_reference resolved");
});

scenario("ai-sdk: previousResponseId", async () => {
  const first = await generateText({ model: provider.responses(model), prompt: "first turn" });
  const id = first.providerMetadata?.openai?.responseId ?? first.response.id;
  check(id && id.startsWith("resp_"), `response id ${id}`);
  const second = await generateText({
    model: provider.responses(model),
    prompt: "second turn",
    providerOptions: { openai: { previousResponseId: id } },
  });
  check(second.text === "Hello! You said: second turn", `text ${JSON.stringify(second.text)}`);
});

let passed = 0;
let failed = 0;
for (const { name, fn } of scenarios) {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (err) {
    failed++;
    const detail = err && err.cause ? ` (cause: ${err.cause})` : "";
    console.log(`not ok - ${name}: ${err && err.stack ? err.stack.split("\n").slice(0, 3).join(" | ") : err}${detail}`);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
