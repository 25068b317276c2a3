"""The project in the workbench (issue 19), without Qt: commands, completions, expansion
when sending and steering (the session keeps what was sent), the notice naming unusable
files, Instructions kept in the settings file, the Context view, Compact now."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from desktop_agent.config import load_settings
from desktop_agent.workbench import Workbench, WorkbenchError, parse_app_command
from tests.helpers.provider_server import ProviderServer, Reply, tool_call
from tests.helpers.wire import last_user_text, system_text
from tests.helpers.workbench import make_workbench


@pytest_asyncio.fixture
async def wb(tmp_path: Path, provider: ProviderServer) -> AsyncIterator[Workbench]:
    agent = tmp_path / "pi-agent"
    (agent / "prompts").mkdir(parents=True)
    (agent / "prompts" / "greet.md").write_text("Say hello to $1.", encoding="utf-8")
    bench = make_workbench(
        tmp_path / "data", provider.model("openai-completions"), prompt_dirs=[agent]
    )
    await bench.start()
    try:
        yield bench
    finally:
        if bench.session is not None:
            await bench.shutdown(stop=True)
        await bench.aclose()


def test_app_commands_are_told_apart_from_templates() -> None:
    assert parse_app_command("/compact keep the names") == ("compact", "keep the names")
    assert parse_app_command("/compact") == ("compact", "")
    assert parse_app_command("/compact\nline two") == ("compact", "line two")
    assert parse_app_command("/model local/x ") == ("model", "local/x")
    assert parse_app_command("/review a.py") is None
    assert parse_app_command("/skill:deploy") is None
    assert parse_app_command("compact") is None


@pytest.mark.asyncio
async def test_completions_expansion_and_the_notice(
    wb: Workbench, workspace: Path, provider: ProviderServer
) -> None:
    assert [c.name for c in await wb.completions()][:2] == ["new", "compact"]  # no session
    skill = workspace / ".pi" / "skills" / "bad" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: bad\ndescription: [unclosed\n---\n", encoding="utf-8")
    await wb.new_session(str(workspace))
    await wb.settled()
    assert dict(wb.notices["project_files"].args)["path"] == str(skill)  # before any send
    found = {c.name: c for c in await wb.completions()}
    assert found["greet"].description == "Say hello to $1." and found["greet"].kind == "template"
    assert "skill:bad" not in found
    provider.script(Reply(text="Hello, Ada."))
    await wb.send("/greet Ada")
    assert last_user_text(provider.last_body()) == "Say hello to Ada."
    items = await wb.branch()
    assert items[0].message is not None
    assert "Say hello to Ada." in str(items[0].message.to_json_dict()["content"])
    [notice] = [n for n in wb.notices.values() if n.key == "project_files"]
    assert dict(notice.args)["path"] == str(skill)
    assert dict(notice.args)["problem"].startswith("skill with broken front matter")
    skill.write_text("---\nname: bad\ndescription: now fine\n---\n", encoding="utf-8")
    provider.script(Reply(text="Ok."))
    await wb.send("again")
    assert "project_files" not in wb.notices  # the cause went away, so did the notice
    assert "<name>bad</name>" in system_text(provider.last_body())


@pytest.mark.asyncio
async def test_instructions_are_kept_and_reach_the_next_turn(
    wb: Workbench, workspace: Path, provider: ProviderServer, tmp_path: Path
) -> None:
    with pytest.raises(WorkbenchError):
        await wb.set_instructions("too early")
    assert await wb.context_view() is None
    await wb.new_session(str(workspace))
    await wb.set_instructions("Use British spelling.")
    saved = load_settings(tmp_path / "data" / "config" / "settings.json")
    assert saved.instructions == {str(workspace): "Use British spelling."}
    view = await wb.context_view()
    assert view is not None and view.instructions == "Use British spelling."
    assert [s.kind for s in view.report.sources] == ["instructions"]
    provider.script(Reply(text="Right."))
    await wb.send("hi")
    assert system_text(provider.last_body()) == view.report.text
    await wb.set_instructions("  ")
    assert wb.settings.instructions == {}


@pytest.mark.asyncio
async def test_compact_now_and_a_model_that_does_not_exist(
    wb: Workbench, workspace: Path, provider: ProviderServer
) -> None:
    await wb.new_session(str(workspace))
    with pytest.raises(WorkbenchError, match="no model 'nowhere/x'"):
        await wb.choose_model("nowhere/x")
    await wb.compact()  # nothing to compact yet: said in a notice, nothing written
    assert "Nothing to compact" in wb.notices["run"].english
    assert wb.session is not None
    kinds_before = [k for _i, _p, k, _t, _r in wb.session.raw_entries()]
    assert "compaction" not in kinds_before


@pytest.mark.asyncio
async def test_the_model_can_read_a_global_skill_it_is_told_about(
    wb: Workbench, workspace: Path, provider: ProviderServer, tmp_path: Path
) -> None:
    skill = tmp_path / "pi-agent" / "skills" / "deploy" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: Deploy it\n---\nRun the release.", encoding="utf-8")
    await wb.new_session(str(workspace))
    provider.script(
        tool_call("read", {"path": str(skill)}),
        Reply(text="Done."),
    )
    await wb.send("deploy please")
    assert f"<location>{skill}</location>" in system_text(provider.requests[-2].body)
    [result] = [m for m in provider.last_body()["messages"] if m["role"] == "tool"]
    assert "Run the release." in str(result["content"])


@pytest.mark.asyncio
async def test_a_template_named_like_a_command_is_named_not_dropped(
    wb: Workbench, workspace: Path
) -> None:
    template = workspace / ".pi" / "prompts" / "compact.md"
    template.parent.mkdir(parents=True)
    template.write_text("Never sent.", encoding="utf-8")
    await wb.new_session(str(workspace))
    assert [c.kind for c in await wb.completions() if c.name == "compact"] == ["command"]
    view = await wb.context_view()
    assert view is not None
    assert [str(p) for p in view.report.problems] == [
        f"{template}: prompt template /compact has the name of an app command: skipped"
    ]
    assert dict(wb.notices["project_files"].args)["path"] == str(template)
