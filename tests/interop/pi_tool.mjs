#!/usr/bin/env node
// Small CLI around the real Pi package (@earendil-works/pi-agent-core, pinned in
// package-lock.json) used by test_pi_interop.py. It only uses Pi's public API:
// JsonlSessionRepo with the Node execution environment, Session and buildContext.
//
// Every command prints exactly one JSON document on stdout. A SessionError raised by Pi
// is reported as {"error": {"code", "message"}} (exit status 0); anything else is a bug
// of this tool or of the test and exits non-zero with a stack trace.
//
//   write-fixture <sessionsRoot> <cwd>   write a realistic session through Pi's API
//   context <path>                       open a file, report leaf, context, labels, name
//   append <path> <text>                 open a file and append a user message (then report)
//   list <sessionsRoot> [cwd]            JsonlSessionRepo.list() metadata
//   canonical <path>                     lines that JSON.stringify would write differently
//   cli-context <path>                   the Pi CLI's view of a file, read-only: its own parse,
//                                        migrateSessionEntries (in memory), leaf = last entry,
//                                        buildSessionContext and convertToLlm
//   cli-open <path>                      SessionManager.open (rewrites v1/v2 files: copies only)
//   cli-write-fixture <sessionDir> <cwd> a session written by the CLI's SessionManager
//   version                              versions of Node.js and of the installed Pi packages
//   batch                                run the commands of a JSON array read from stdin
//                                        ([[command, ...args], ...]), print the array of results

import { readFile } from "node:fs/promises";
import { dirname } from "node:path";

import { JsonlSessionRepo, NodeExecutionEnv, SessionError } from "@earendil-works/pi-agent-core/node";

// The Pi CLI package is large: loaded only by the commands that use it.
async function cli() {
  return import("@earendil-works/pi-coding-agent");
}

function makeRepo(sessionsRoot) {
  const fs = new NodeExecutionEnv({ cwd: process.cwd() });
  return new JsonlSessionRepo({ fs, sessionsRoot });
}

async function openPath(path) {
  // JsonlSessionRepo.open only looks at metadata.path; the root is irrelevant here.
  return makeRepo(dirname(path)).open({ path });
}

async function describe(session) {
  const entries = await session.getEntries();
  const labels = {};
  for (const entry of entries) {
    const label = await session.getLabel(entry.id);
    if (label !== undefined) labels[entry.id] = label;
  }
  const name = await session.getSessionName();
  const metadata = await session.getMetadata();
  return {
    leafId: await session.getLeafId(),
    context: await session.buildContext(),
    entries: entries.length,
    entryIds: entries.map((e) => e.id),
    entryTypes: entries.map((e) => e.type),
    branch: (await session.getBranch()).map((e) => e.id),
    labels,
    name: name ?? null,
    metadata: {
      id: metadata.id,
      createdAt: metadata.createdAt,
      cwd: metadata.cwd,
      path: metadata.path,
      parentSessionPath: metadata.parentSessionPath ?? null,
    },
  };
}

// ----------------------------------------------------------------------- the fixture

const T0 = 1790000000000; // fixed message timestamps (epoch ms)

function usage(input, output, cacheRead, cacheWrite, price) {
  const cost = {
    input: (input * price.input) / 1e6,
    output: (output * price.output) / 1e6,
    cacheRead: (cacheRead * price.cacheRead) / 1e6,
    cacheWrite: (cacheWrite * price.cacheWrite) / 1e6,
  };
  cost.total = cost.input + cost.output + cost.cacheRead + cost.cacheWrite;
  return { input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite, cost };
}

const SONNET = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const GPT = { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 0 };

function user(text, minute, extra = []) {
  return { role: "user", content: [{ type: "text", text }, ...extra], timestamp: T0 + minute * 60000 };
}

function sonnet(content, stopReason, minute, u, more = {}) {
  return {
    role: "assistant",
    content,
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    responseId: `msg_${minute}`,
    usage: u,
    stopReason,
    ...more,
    timestamp: T0 + minute * 60000 + 1234,
  };
}

function gpt(content, stopReason, minute, u, more = {}) {
  return {
    role: "assistant",
    content,
    api: "openai-responses",
    provider: "openai",
    model: "gpt-5",
    usage: u,
    stopReason,
    ...more,
    timestamp: T0 + minute * 60000 + 987,
  };
}

function toolResult(toolCallId, toolName, text, minute, more = {}) {
  return {
    role: "toolResult",
    toolCallId,
    toolName,
    content: [{ type: "text", text }],
    ...more,
    isError: more.isError ?? false,
    timestamp: T0 + minute * 60000 + 50,
  };
}

// 1x1 transparent PNG
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

async function writeFixture(sessionsRoot, cwd) {
  const repo = makeRepo(sessionsRoot);
  const s = await repo.create({ cwd });
  const ids = {};

  ids.model1 = await s.appendModelChange("anthropic", "claude-sonnet-4-5");
  ids.think1 = await s.appendThinkingLevelChange("medium");
  ids.u1 = await s.appendMessage(user("What does greet() in src/greet.ts do? Grüße 👋", 0));
  ids.a1 = await s.appendMessage(
    sonnet(
      [
        {
          type: "thinking",
          thinking: "The user wants an explanation. I should read the file first.",
          thinkingSignature: "EqQBCkgIARABGAIiQL2n0sig+/==",
        },
        { type: "thinking", thinking: "", thinkingSignature: "RUNSWVBURUQ=", redacted: true },
        { type: "text", text: "Let me read the file." },
        { type: "toolCall", id: "toolu_01", name: "read", arguments: { path: "src/greet.ts", limit: 200 } },
      ],
      "toolUse",
      1,
      usage(1200, 85, 0, 1100, SONNET),
    ),
  );
  ids.tr1 = await s.appendMessage(
    toolResult("toolu_01", "read", 'export const greet = (n: string) => `Hello, ${n}!`;\n', 1, {
      details: { lines: 1, truncated: false },
    }),
  );
  ids.a2 = await s.appendMessage(
    sonnet(
      [{ type: "text", text: "`greet(n)` returns the string `Hello, n!` — nothing else." }],
      "stop",
      2,
      usage(40, 30, 2300, 0, SONNET),
    ),
  );
  ids.label1 = await s.appendLabel(ids.u1, "question");
  ids.label2 = await s.appendLabel(ids.a2, "  answer  ");
  ids.name1 = await s.appendSessionName("first name");
  ids.name2 = await s.appendSessionName("  Greeting demo  ");

  // Branch A: write a test.
  ids.u2 = await s.appendMessage(user("Add a test for it.", 3));
  ids.a3 = await s.appendMessage(
    sonnet(
      [
        { type: "text", text: "Writing the test." },
        {
          type: "toolCall",
          id: "toolu_02",
          name: "write",
          arguments: { path: "test/greet.test.ts", content: "expect(greet('x')).toBe('Hello, x!');\n" },
        },
      ],
      "toolUse",
      4,
      usage(2500, 120, 0, 0, SONNET),
    ),
  );
  ids.tr2 = await s.appendMessage(toolResult("toolu_02", "write", "Wrote 1 line.", 4));
  ids.a4 = await s.appendMessage(sonnet([{ type: "text", text: "Done." }], "stop", 5, usage(2700, 5, 0, 0, SONNET)));
  // A sibling of a4: move back to the tool result (no summary) and answer differently.
  await s.moveTo(ids.tr2);
  ids.a4b = await s.appendMessage(
    sonnet([{ type: "text", text: "Done, and the test passes." }], "stop", 6, usage(2700, 9, 0, 0, SONNET)),
  );
  ids.label3 = await s.appendLabel(ids.a4b, "tests-written");
  ids.label4 = await s.appendLabel(ids.a2, undefined); // clears "answer"

  // Back to a2 with a branch summary of branch A, then continue on another model.
  ids.bs1 = await s.moveTo(ids.a2, {
    summary: "Branch A: wrote test/greet.test.ts with one expectation.",
    details: { readFiles: ["src/greet.ts"], modifiedFiles: ["test/greet.test.ts"] },
    fromHook: false,
  });
  ids.model2 = await s.appendModelChange("openai", "gpt-5");
  ids.think2 = await s.appendThinkingLevelChange("high");
  ids.u3 = await s.appendMessage(user("Erkläre es bitte auf Französisch — « ça va » ?", 7));
  ids.a5 = await s.appendMessage(
    gpt(
      [
        { type: "thinking", thinking: "Translate the explanation.", thinkingSignature: '{"id":"rs_1","type":"reasoning"}' },
        { type: "text", text: "`greet(n)` renvoie « Hello, n! ».", textSignature: "msg_abc" },
      ],
      "stop",
      8,
      usage(3000, 60, 1000, 0, GPT),
      { responseId: "resp_1" },
    ),
  );
  ids.compaction = await s.appendCompaction(
    "## Goal\nExplain greet() and test it.\n\n## Progress\n- [x] Explained",
    ids.u3,
    4321,
    { readFiles: ["src/greet.ts"], modifiedFiles: [] },
    false,
  );
  ids.u4 = await s.appendMessage(
    user("Here is a screenshot.", 9, [{ type: "image", data: PNG, mimeType: "image/png" }]),
  );
  ids.custom1 = await s.appendCustomEntry("demo-state", { counter: 1, nested: { ok: true, list: [1, "two", null] } });
  ids.custom2 = await s.appendCustomEntry("demo-marker");
  ids.cm1 = await s.appendCustomMessageEntry("demo-note", "Reminder: keep answers short.", true, { source: "demo" });
  ids.cm2 = await s.appendCustomMessageEntry(
    "demo-hidden",
    [
      { type: "text", text: "Hidden context for the model." },
      { type: "image", data: PNG, mimeType: "image/png" },
    ],
    false,
  );
  ids.a5b = await s.appendMessage(
    gpt(
      [{ type: "toolCall", id: "call_1|fc_1", name: "bash", arguments: { command: "cat missing.txt" }, thoughtSignature: "c2ln" }],
      "toolUse",
      9,
      usage(3200, 15, 0, 0, GPT),
    ),
  );
  ids.tr3 = await s.appendMessage(
    toolResult("call_1|fc_1", "bash", "cat: missing.txt: No such file or directory\nexit code 1", 9, { isError: true }),
  );
  // A role the harness does not know (the coding-agent writes these), kept as stored.
  ids.bash = await s.appendMessage({
    role: "bashExecution",
    command: "ls src",
    output: "greet.ts\n",
    exitCode: 0,
    cancelled: false,
    truncated: false,
    timestamp: T0 + 9 * 60000 + 500,
  });
  ids.a6 = await s.appendMessage(
    gpt([], "error", 10, usage(0, 0, 0, 0, GPT), {
      responseModel: "gpt-5-2025-08-07",
      errorMessage: "503 Service Unavailable",
      diagnostics: [
        { type: "retry", timestamp: T0 + 10 * 60000, error: { name: "APIError", message: "503", code: "503" } },
      ],
    }),
  );
  // An empty branch summary is written but does not reach the context.
  ids.bsEmpty = await s.moveTo(ids.a6, { summary: "" });
  ids.u5 = await s.appendMessage({ role: "user", content: "Please retry (string content).", timestamp: T0 + 11 * 60000 });
  ids.a7 = await s.appendMessage(
    gpt([{ type: "text", text: "Voilà : `greet(n)` renvoie une salutation." }], "stop", 12, usage(3100, 20, 0, 0, GPT)),
  );
  ids.label5 = await s.appendLabel(ids.a7, "final");

  // A second root: move to null with a summary, continue there.
  ids.bsRoot = await s.moveTo(null, { summary: "Started over from scratch.", fromHook: true });
  ids.u6 = await s.appendMessage(user("Unrelated question on a new root.", 13));

  // End on a leaf that is not the last appended entry: the final line is a `leaf` entry.
  await s.moveTo(ids.label5);

  const entries = await s.getEntries();
  const metadata = await s.getMetadata();
  return {
    path: metadata.path,
    id: metadata.id,
    leafId: await s.getLeafId(),
    context: await s.buildContext(),
    entryCount: entries.length,
    ids,
    ...(await describe(s)),
  };
}

// ----------------------------------------------------------------------- the Pi CLI's view

function llmView(messages) {
  // What the model is sent, reduced to role and text (images as a marker), plus the raw.
  return messages.map((m) => {
    const content = typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content ?? []);
    const parts = content.map((b) =>
      b.type === "text" ? b.text : b.type === "toolCall" ? `[toolCall ${b.name} ${JSON.stringify(b.arguments)}]` : `[${b.type}]`,
    );
    return { role: m.role, text: parts.join("") };
  });
}

function branchOf(entries, leafId) {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const path = [];
  let current = leafId ? byId.get(leafId) : undefined;
  while (current) {
    path.unshift(current.id);
    current = current.parentId ? byId.get(current.parentId) : undefined;
  }
  return path;
}

async function cliContext(path) {
  const { parseSessionEntries, migrateSessionEntries, buildSessionContext, convertToLlm } = await cli();
  const all = parseSessionEntries(await readFile(path, "utf8"));
  const header = all.find((e) => e.type === "session");
  const versionOnDisk = header?.version ?? 1;
  migrateSessionEntries(all); // in memory: the file is not touched
  const entries = all.filter((e) => e.type !== "session");
  const leafId = entries.length ? entries[entries.length - 1].id : null; // SessionManager's rule
  const context = buildSessionContext(entries, leafId);
  const llm = convertToLlm(context.messages);
  return {
    versionOnDisk,
    leafId,
    branch: branchOf(entries, leafId),
    entryIds: entries.map((e) => e.id),
    context,
    llm,
    llmView: llmView(llm),
  };
}

async function cliOpen(path) {
  const { SessionManager, convertToLlm } = await cli();
  const manager = SessionManager.open(path, dirname(path));
  const context = manager.buildSessionContext();
  const llm = convertToLlm(context.messages);
  return {
    sessionId: manager.getSessionId(),
    leafId: manager.getLeafId(),
    branch: manager.getBranch().map((e) => e.id),
    entries: manager.getEntries().length,
    name: manager.getSessionName() ?? null,
    context,
    llmView: llmView(llm),
  };
}

async function cliWriteFixture(sessionDir, cwd) {
  // Every role and entry the CLI's SessionManager writes, bash runs in all their shapes.
  const { SessionManager } = await cli();
  const sm = SessionManager.create(cwd, sessionDir);
  const at = (minute) => T0 + minute * 60000;
  const ids = {};
  ids.model = sm.appendModelChange("interop", "local-test");
  ids.think = sm.appendThinkingLevelChange("off");
  ids.u1 = sm.appendMessage(user("List the files.", 0));
  const bash = (command, output, more, minute) =>
    sm.appendMessage({ role: "bashExecution", command, output, exitCode: 0, cancelled: false, truncated: false, timestamp: at(minute), ...more });
  ids.b1 = bash("ls", "a.txt\nb.txt\n", {}, 1);
  ids.b2 = bash("false", "", { exitCode: 1 }, 1);
  ids.b3 = bash("sleep 100", "partial", { exitCode: undefined, cancelled: true }, 1);
  ids.b4 = bash("cat big.log", "tail of it", { truncated: true, fullOutputPath: "/tmp/pi-bash-0001.log" }, 1);
  ids.b5 = bash("env", "SECRET-LOOKING=1", { excludeFromContext: true }, 1);
  ids.a1 = sm.appendMessage({
    role: "assistant",
    content: [{ type: "text", text: "Two files." }],
    api: "openai-completions",
    provider: "interop",
    model: "local-test",
    usage: { input: 100, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 105, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop",
    timestamp: at(2),
  });
  ids.cm = sm.appendCustomMessageEntry("note", "Reminder from an extension.", true, { from: "test" });
  ids.custom = sm.appendCustomEntry("state", { n: 1 });
  ids.label = sm.appendLabelChange(ids.u1, "start");
  ids.name = sm.appendSessionInfo("CLI fixture");
  ids.u2 = sm.appendMessage(user("And now?", 3));
  ids.bs = sm.branchWithSummary(ids.a1, "Tried something else first.", { readFiles: [], modifiedFiles: [] }, false);
  ids.u3 = sm.appendMessage(user("Back on the first branch.", 4));
  ids.cm2 = sm.appendCustomMessageEntry("note", [{ type: "text", text: "Blocks from an extension." }], false);
  ids.comp = sm.appendCompaction("## Goal\nList files.", ids.u1, 999, { readFiles: [], modifiedFiles: [] }, false);
  ids.u4 = sm.appendMessage(user("After compaction.", 5));
  ids.b6 = bash("pwd", "/p\n", {}, 5);
  return { path: sm.getSessionFile(), ids, ...(await cliContext(sm.getSessionFile())) };
}

// ----------------------------------------------------------------------- other commands

async function context(path) {
  return describe(await openPath(path));
}

async function append(path, text) {
  const s = await openPath(path);
  const appendedId = await s.appendMessage({ role: "user", content: [{ type: "text", text }], timestamp: Date.now() });
  const reopened = await openPath(path);
  return { appendedId, ...(await describe(reopened)) };
}

async function list(sessionsRoot, cwd) {
  const sessions = await makeRepo(sessionsRoot).list(cwd === undefined ? {} : { cwd });
  return { sessions };
}

async function canonical(path) {
  const text = await readFile(path, "utf8");
  const lines = text.split("\n");
  const differences = [];
  const last = lines.pop();
  lines.forEach((line, index) => {
    let again;
    try {
      again = JSON.stringify(JSON.parse(line));
    } catch (error) {
      again = `<not JSON: ${error.message}>`;
    }
    if (again !== line) differences.push({ line: index + 1, ours: line, pi: again });
  });
  return {
    lines: lines.length,
    endsWithNewline: last === "",
    hasCarriageReturn: text.includes("\r"),
    differences,
  };
}

async function version() {
  const packages = {};
  for (const name of ["@earendil-works/pi-agent-core", "@earendil-works/pi-ai", "@earendil-works/pi-coding-agent"]) {
    const manifest = new URL(`./node_modules/${name}/package.json`, import.meta.url);
    packages[name] = JSON.parse(await readFile(manifest, "utf8")).version;
  }
  return { node: process.versions.node, packages };
}

async function batch() {
  // stdin: a JSON array of [command, ...args]; result: an array of their results.
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const results = [];
  for (const [name, ...args] of JSON.parse(Buffer.concat(chunks).toString("utf8"))) {
    results.push(await run(name, args));
  }
  return results;
}

const commands = {
  version: [version, 0],
  "write-fixture": [writeFixture, 2],
  context: [context, 1],
  append: [append, 2],
  list: [list, 1],
  canonical: [canonical, 1],
  "cli-context": [cliContext, 1],
  "cli-open": [cliOpen, 1],
  "cli-write-fixture": [cliWriteFixture, 2],
  batch: [batch, 0],
};

async function run(name, args) {
  const command = commands[name];
  if (!command || args.length < command[1]) {
    throw new Error(`usage: pi_tool.mjs <${Object.keys(commands).join("|")}> args...`);
  }
  try {
    return await command[0](...args);
  } catch (error) {
    if (error instanceof SessionError) return { error: { code: error.code, message: error.message } };
    throw error;
  }
}

process.stdout.write(JSON.stringify(await run(process.argv[2], process.argv.slice(3))) + "\n");
