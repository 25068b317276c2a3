"""mcp.json in the Claude Desktop / Cursor / Pi format, tool names, and approval rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from desktop_agent.mcp import (
    MAX_NAME,
    McpConfig,
    McpConfigError,
    McpServerConfig,
    load_mcp_config,
    save_mcp_config,
    tool_name,
)
from desktop_agent.tools import ApprovalPolicy, server_rule

CLAUDE_DESKTOP = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
            "env": {"GITHUB_TOKEN": "ghp_abcdefghijklmnop", "LOG_LEVEL": "debug-verbose"},
        },
        "tracker": {
            "url": "https://tracker.example/mcp",
            "headers": {"Authorization": "Bearer sk-tracker-secret"},
        },
        "legacy": {"type": "sse", "url": "https://old.example/events"},
        "off": {"command": "server", "disabled": True},
    },
    "globalShortcut": "",
}


def test_a_pasted_claude_desktop_block_loads_with_transports_and_secrets(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps(CLAUDE_DESKTOP))
    config = load_mcp_config(path)
    assert config.problems == []
    assert {n: s.transport for n, s in config.servers.items()} == {
        "filesystem": "stdio",
        "tracker": "http",
        "legacy": "sse",
        "off": "stdio",
    }
    assert list(config.enabled()) == ["filesystem", "tracker", "legacy"]
    assert config.secrets() == [
        "ghp_abcdefghijklmnop",
        "Bearer sk-tracker-secret",
        "sk-tracker-secret",
    ]
    fs = config.servers["filesystem"]
    assert (fs.init_timeout, fs.timeout) == (30.0, 600.0)


def test_save_and_load_round_trip_keeping_other_apps_keys(tmp_path: Path) -> None:
    entry = {"command": "srv", "args": ["a"], "initTimeout": 5, "autoApprove": ["x"]}
    config = McpConfig(servers={"one": McpServerConfig.model_validate(entry)})
    path = tmp_path / "mcp.json"
    save_mcp_config(path, config)
    assert json.loads(path.read_text()) == {"mcpServers": {"one": entry}}
    assert load_mcp_config(path).servers["one"] == config.servers["one"]


def test_bad_files_and_bad_entries_get_clear_errors_and_lose_the_others(tmp_path: Path) -> None:
    assert load_mcp_config(tmp_path / "missing.json").servers == {}
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(McpConfigError, match="is not valid JSON"):
        load_mcp_config(broken)
    listless = tmp_path / "listless.json"
    listless.write_text("{}")
    with pytest.raises(McpConfigError, match='has no "mcpServers" object'):
        load_mcp_config(listless)
    mixed = tmp_path / "mixed.json"
    bad = {"neither": {"args": []}, "both": {"command": "x", "url": "http://h"}, "text": "x"}
    mixed.write_text(json.dumps({"mcpServers": {"good": {"command": "x"}, **bad}}))
    config = load_mcp_config(mixed)
    assert list(config.servers) == ["good"]
    assert config.problems == [
        "neither: needs a 'command' (stdio) or a 'url' (HTTP); left out",
        "both: has both 'command' and 'url'; keep one; left out",
        "text: not an object; left out",
    ]


def test_tool_names_fit_what_providers_accept() -> None:
    assert tool_name("files", "read_file") == "mcp__files__read_file"
    assert tool_name("my server.v2", "do it!") == "mcp__my_server_v2__do_it_"
    assert tool_name("a__b", "c__d") == "mcp__a_b__c__d"
    long_a = tool_name("s" * 40, "t" * 40 + "a")
    long_b = tool_name("s" * 40, "t" * 40 + "b")
    assert len(long_a) == len(long_b) == MAX_NAME
    assert long_a != long_b
    assert server_rule(tool_name("a__b", "c__d")) == "mcp__a_b"
    assert server_rule("bash") is None


def test_approval_rules_name_a_tool_or_every_tool_of_a_server() -> None:
    policy = ApprovalPolicy(rules={"mcp__files": "allow", "mcp__files__delete": "deny"})
    assert policy.rule_for("mcp__files__read") == "allow"
    assert policy.rule_for("mcp__files__delete") == "deny"
    assert policy.rule_for("mcp__other__read") == "ask"
