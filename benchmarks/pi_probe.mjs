// The real Pi (npm @earendil-works/pi-agent-core, pinned in tests/interop) for the
// session benchmarks: each command runs in a fresh Node process and prints one JSON line.
//
//   open <path>                          time JsonlSessionRepo.open + Session.buildContext
//   append <path> <messages.json> <n>    append n messages through Pi's Session API
//   write <root> <cwd> <messages.json> <entries> <branch-every> <branch-back>
//                                        write a session through Pi's API: messages in
//                                        turns, a model and thinking change, and every
//                                        <branch-every> entries a move <branch-back>
//                                        entries back (with a branch summary), so the
//                                        file holds long branches
//
// Times are measured inside the process around the calls (Node's start-up and imports
// are not counted, as on the Python side); peak RSS is process.resourceUsage().maxRSS.

import { readFileSync } from "node:fs";
import { dirname } from "node:path";

const core = await import(
  new URL("../tests/interop/node_modules/@earendil-works/pi-agent-core/dist/node.js", import.meta.url)
);
const { JsonlSessionRepo, NodeExecutionEnv } = core;

function repoFor(root) {
  const fs = new NodeExecutionEnv({ cwd: process.cwd() });
  return new JsonlSessionRepo({ fs, sessionsRoot: root });
}

function peakRss() {
  return process.resourceUsage().maxRSS * 1024;
}

async function open(path) {
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const session = await repoFor(dirname(path)).open({ path });
  const t1 = performance.now();
  const context = await session.buildContext();
  const t2 = performance.now();
  return {
    open_s: (t1 - t0) / 1000,
    build_s: (t2 - t1) / 1000,
    total_s: (t2 - t0) / 1000,
    messages: context.messages.length,
    entries: (await session.getEntries()).length,
    rss_before: rssBefore,
    peak_rss: peakRss(),
  };
}

async function append(path, messagesFile, count) {
  const messages = JSON.parse(readFileSync(messagesFile, "utf8"));
  const session = await repoFor(dirname(path)).open({ path });
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    await session.appendMessage(messages[i % messages.length]);
  }
  return { appended: count, seconds: (performance.now() - t0) / 1000 };
}

async function write(root, cwd, messagesFile, entries, branchEvery, branchBack) {
  const messages = JSON.parse(readFileSync(messagesFile, "utf8"));
  const repo = repoFor(root);
  const session = await repo.create({ cwd });
  await session.appendModelChange("anthropic", "claude-sonnet-4-5");
  await session.appendThinkingLevelChange("medium");
  const ids = [];
  let written = 2;
  let branches = 0;
  let next = 0;
  let sinceBranch = 0;
  const t0 = performance.now();
  while (written < entries) {
    if (ids.length > branchBack && sinceBranch >= branchEvery) {
      const target = ids[ids.length - branchBack];
      await session.moveTo(target, { summary: `Tried another way (${branches}).` });
      written += 2;
      branches += 1;
      sinceBranch = 0;
      ids.length = ids.length - branchBack + 1;
      continue;
    }
    sinceBranch += 1;
    ids.push(await session.appendMessage(messages[next % messages.length]));
    next += 1;
    written += 1;
  }
  const metadata = await session.getMetadata();
  return {
    path: metadata.path,
    entries: written,
    branches,
    seconds: (performance.now() - t0) / 1000,
    leaf: await session.getLeafId(),
  };
}

const [command, ...args] = process.argv.slice(2);
let result;
if (command === "open") result = await open(args[0]);
else if (command === "append") result = await append(args[0], args[1], Number(args[2]));
else if (command === "write")
  result = await write(args[0], args[1], args[2], Number(args[3]), Number(args[4]), Number(args[5]));
else throw new Error(`unknown command ${command}`);
process.stdout.write(JSON.stringify(result) + "\n");
