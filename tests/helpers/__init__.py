"""What the tests share: fakes and builders, imported by test modules (never from a
conftest, as pytest advises; qutebrowser keeps its helpers the same way).

- `provider_server`: the scripted model server on 127.0.0.1 (the three wire APIs);
- `workbench`: a real `Workbench` on a temp data dir and either store, session seeding,
  `Recorder` (what a workbench emitted);
- `window`: driving the real `MainWindow` (open, run coroutines, read what was painted);
- `keyring`: `MemoryKeyring`; `sandbox`: the tools tests' hostile workspace and `tree_hash`;
- `postgres`: a real PostgreSQL cluster; `pi`, `pi_cli`: the real Pi packages via Node;
- `mcp_server`, `mcp_servers`: the test MCP server and its configs;
- `git_repo`, `prompt_folder`, `wire`: a user's git repository, issue 19's folder of context
  files, what a request body carries; `canaries`, `figures`: canary secrets and the
  reliability summary's figures.
"""

STORES = ("jsonl", "sqlite")
"""The session stores the store-parametrized tests run on (the `store` fixture)."""
