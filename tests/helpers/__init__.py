"""What the tests share: fakes and builders, imported by test modules (never from a
conftest, as pytest advises; qutebrowser keeps its helpers the same way).

- `provider_server`: the scripted model server on 127.0.0.1 (the three wire APIs);
- `workbench`: a real `Workbench` on a temp data dir and either store, session seeding,
  `Recorder` (what a workbench emitted);
- `window`: driving the real `MainWindow` (open, run coroutines, read what was painted);
- `keyring`: `MemoryKeyring`; `sandbox`: the tools tests' hostile workspace and `tree_hash`;
- `postgres`: a real PostgreSQL cluster; `pi`, `pi_cli`: the real Pi packages via Node;
- `mcp_server`, `mcp_servers`: the test MCP server and its configs;
- `git_repo`, `checkpoint_flow`: a user's git repository and the version-one/version-two
  flow in it; `prompt_folder`, `wire`: issue 19's folder of context files, what a request
  body carries; `pi_files`: session files in Pi's formats (v1, v2, v3) and what the Pi CLI
  appends; `real_fs`: real mounts for disk faults;
- `canaries`, `figures`: canary secrets and the reliability summary's figures;
  `processes`: the costly processes a test starts (the ``slow`` marker's check).
"""

STORES = ("jsonl", "sqlite")
"""The session stores the store-parametrized tests run on (the `store` fixture)."""
