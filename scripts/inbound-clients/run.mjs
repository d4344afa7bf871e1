// The inbound scenarios of scripts/inbound-clients.sh: the official
// @anthropic-ai/sdk against /v1/messages and the official openai SDK
// against /v1/chat/completions of `harnessflow serve` with its scripted
// model. The SDKs' own stream parsers and accumulators are the oracle:
// they throw on an event or a body they do not accept. Each scenario
// prints "ok - NAME" or "not ok - NAME: why".
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";

const base = process.argv[2]; // http://127.0.0.1:PORT, serve with the scripted chat model
const messagesBase = process.argv[3]; // serve in front of the scripted Messages model (the pass-through)
const anthropic = new Anthropic({ baseURL: base, apiKey: "sk-test", maxRetries: 0 });
const openai = new OpenAI({ baseURL: base + "/v1", apiKey: "sk-test", maxRetries: 0 });
const COMMAND = "echo hello from harnessflow";

let passed = 0, failed = 0;
async function scenario(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${name}: ${e && e.stack ? e.stack : e}`);
  }
}
function check(cond, what) {
  if (!cond) throw new Error(what);
}

const bash = {
  name: "Bash",
  description: "Run a shell command.",
  input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
};

await scenario("anthropic: streamed tool loop (Bash), then a non-streamed answer to the result", async () => {
  const messages = [{ role: "user", content: "Run a command, please." }];
  const stream = anthropic.messages.stream({
    model: "claude-sonnet-4-5", max_tokens: 1024, system: [{ type: "text", text: "Be terse.", cache_control: { type: "ephemeral" } }],
    messages, tools: [bash], thinking: { type: "enabled", budget_tokens: 2048 },
  });
  const kinds = [];
  stream.on("streamEvent", (ev) => kinds.push(ev.type));
  const msg = await stream.finalMessage();
  check(kinds[0] === "message_start" && kinds.at(-1) === "message_stop", `events ${kinds.join(",")}`);
  // (The SDK drops ping events before they reach streamEvent.)
  check(msg.stop_reason === "tool_use", `stop_reason ${msg.stop_reason}`);
  const thinking = msg.content.find((b) => b.type === "thinking");
  check(thinking && thinking.thinking.length > 0 && typeof thinking.signature === "string", `no thinking block: ${JSON.stringify(msg.content)}`);
  const use = msg.content.find((b) => b.type === "tool_use");
  check(use && use.name === "Bash" && use.input.command === COMMAND, `tool_use ${JSON.stringify(use)}`);
  check(msg.usage && msg.usage.output_tokens > 0, `usage ${JSON.stringify(msg.usage)}`);
  messages.push({ role: "assistant", content: msg.content });
  messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "hello from harnessflow" }] });
  const final = await anthropic.messages.create({ model: "claude-sonnet-4-5", max_tokens: 1024, messages, tools: [bash] });
  check(final.type === "message" && final.role === "assistant" && final.stop_reason === "end_turn", `final ${JSON.stringify(final)}`);
  const text = final.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  check(text.includes("hello from harnessflow"), `final text ${text}`);
});

await scenario("anthropic: plain text, streamed and not, the same text", async () => {
  const params = { model: "claude-haiku-4-5", max_tokens: 256, messages: [{ role: "user", content: "Say hello." }] };
  const streamed = await anthropic.messages.stream(params).finalMessage();
  const whole = await anthropic.messages.create(params);
  const t1 = streamed.content.map((b) => b.text).join(""), t2 = whole.content.map((b) => b.text).join("");
  check(t1.length > 0 && t1 === t2, `streamed ${JSON.stringify(t1)} vs ${JSON.stringify(t2)}`);
  check(streamed.stop_reason === "end_turn" && whole.stop_reason === "end_turn", "stop_reason");
});

await scenario("anthropic: through the pass-through to a Messages upstream, the signature and the tool loop kept", async () => {
  const client = new Anthropic({ baseURL: messagesBase, apiKey: "sk-test", maxRetries: 0 });
  const messages = [{ role: "user", content: "Run a command, please." }];
  const params = { model: "claude-sonnet-4-5", max_tokens: 1024, messages, tools: [bash], thinking: { type: "enabled", budget_tokens: 2048 } };
  const msg = await client.messages.stream(params).finalMessage();
  const thinking = msg.content.find((b) => b.type === "thinking");
  check(thinking && thinking.signature.startsWith("scripted-signature-"), `thinking ${JSON.stringify(thinking)}`);
  const use = msg.content.find((b) => b.type === "tool_use");
  check(msg.stop_reason === "tool_use" && use && use.name === "Bash", JSON.stringify(msg.content));
  messages.push({ role: "assistant", content: msg.content });
  messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "hello from harnessflow", cache_control: { type: "ephemeral" } }] });
  const final = await client.messages.create(params);
  check(final.stop_reason === "end_turn" && final.content.some((b) => b.type === "text" && b.text.includes("hello from harnessflow")), JSON.stringify(final));
});

await scenario("anthropic: count_tokens", async () => {
  const r = await anthropic.messages.countTokens({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "How many tokens is this?" }] });
  check(Number.isInteger(r.input_tokens) && r.input_tokens > 0, JSON.stringify(r));
});

await scenario("anthropic: a bad body is a BadRequestError naming the JSON path", async () => {
  try {
    await anthropic.messages.create({ model: "m", max_tokens: 5, messages: [{ role: "user", content: [{ type: "text", text: 7 }] }] });
    throw new Error("no error");
  } catch (e) {
    check(e instanceof Anthropic.BadRequestError, `got ${e}`);
    check(e.error && e.error.type === "error" && e.error.error.type === "invalid_request_error", JSON.stringify(e.error));
    check(e.error.error.message.includes("messages[0].content[0].text"), e.error.error.message);
  }
});

const shell = {
  type: "function",
  function: { name: "bash", description: "Run a command.", parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] } },
};

await scenario("openai: streamed tool loop with include_usage, then a non-streamed answer to the result", async () => {
  const messages = [{ role: "system", content: "Be brief." }, { role: "user", content: "Run a command." }];
  const stream = openai.chat.completions.stream({ model: "test-model", messages, tools: [shell], stream_options: { include_usage: true } });
  let chunks = 0, usageChunk = false;
  stream.on("chunk", (c) => {
    chunks++;
    if (c.choices.length === 0 && c.usage) usageChunk = true;
  });
  const done = await stream.finalChatCompletion();
  const choice = done.choices[0];
  check(choice.finish_reason === "tool_calls", `finish_reason ${choice.finish_reason}`);
  const call = choice.message.tool_calls && choice.message.tool_calls[0];
  check(call && call.function.name === "bash" && JSON.parse(call.function.arguments).command === COMMAND, JSON.stringify(choice.message));
  check(usageChunk && done.usage && done.usage.total_tokens > 0, `usage ${JSON.stringify(done.usage)} (chunks ${chunks})`);
  messages.push(choice.message, { role: "tool", tool_call_id: call.id, content: "hello from harnessflow" });
  const final = await openai.chat.completions.create({ model: "test-model", messages, tools: [shell] });
  check(final.object === "chat.completion" && final.choices[0].finish_reason === "stop", JSON.stringify(final));
  check(final.choices[0].message.content.includes("hello from harnessflow"), final.choices[0].message.content);
});

await scenario("openai: runTools runs the tool loop itself", async () => {
  let ran = "";
  const runner = openai.chat.completions.runTools({
    model: "test-model", messages: [{ role: "user", content: "Run a command." }],
    tools: [{ type: "function", function: { ...shell.function, parse: JSON.parse, function: (args) => { ran = args.command; return "hello from harnessflow"; } } }],
  });
  const text = await runner.finalContent();
  check(ran === COMMAND, `ran ${ran}`);
  check(text && text.includes("hello from harnessflow"), `final ${text}`);
});

await scenario("openai: a bad body is a BadRequestError with the JSON path as param", async () => {
  try {
    await openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: [{ type: "video" }] }] });
    throw new Error("no error");
  } catch (e) {
    check(e instanceof OpenAI.BadRequestError, `got ${e}`);
    check(e.param === "messages[0].content[0].type", `param ${e.param}`);
  }
});

console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
