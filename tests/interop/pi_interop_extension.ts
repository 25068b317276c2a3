// A small extension the interop tests load into the real Pi CLI (`-e`): RPC mode has no
// command for tree navigation, so `/interop-nav <entryId> [summarize]` calls the
// extension API's navigateTree, and `/interop-leaf` reports where the CLI's leaf is.
// Each command ends with a notification `interop:<json>` the test waits for.

import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  pi.registerCommand("interop-nav", {
    description: "navigateTree to an entry (tests only)",
    handler: async (args, ctx) => {
      const [target, mode] = (args ?? "").trim().split(/\s+/);
      await ctx.waitForIdle();
      const result = await ctx.navigateTree(target, { summarize: mode === "summarize" });
      const report = {
        command: "interop-nav",
        cancelled: result.cancelled,
        editorText: result.editorText ?? null,
        leaf: ctx.sessionManager.getLeafId(),
      };
      ctx.ui.notify(`interop:${JSON.stringify(report)}`, "info");
    },
  });
  pi.registerCommand("interop-leaf", {
    description: "report the current leaf (tests only)",
    handler: async (_args, ctx) => {
      await ctx.waitForIdle();
      const report = { command: "interop-leaf", leaf: ctx.sessionManager.getLeafId() };
      ctx.ui.notify(`interop:${JSON.stringify(report)}`, "info");
    },
  });
}
