"""Issue "The files follow the branch"'s flow in a folder that is the user's own git
repository (tests/helpers/git_repo.py): the model writes version one, then the prompt is
edited and the model writes version two; and what each version leaves in the folder."""

from __future__ import annotations

from pathlib import Path

from desktop_agent.workbench import Workbench
from tests.helpers.provider_server import ProviderServer, Reply, ToolCallSpec, tool_call

V1 = "version one\n"
V2 = "version two\n"


async def two_versions(wb: Workbench, provider: ProviderServer, project: Path) -> list[str]:
    """The issue's flow: version one, then the prompt edited to version two. Returns the
    two prompts' entry ids."""
    await wb.new_session(str(project))
    provider.script(
        tool_call("write", {"path": "notes.txt", "content": V1}, "w1"),
        Reply(text="one written"),
    )
    await wb.send("Write version one")
    first = (await wb.branch())[0].entry_id
    provider.script(
        Reply(
            tool_calls=[
                ToolCallSpec("w2", "write", {"path": "notes.txt", "content": V2}),
                ToolCallSpec("b2", "bash", {"command": "echo extra > extra.txt; rm keep.txt"}),
            ]
        ),
        Reply(text="two written"),
    )
    await wb.edit_resend(first, "Write version two")
    await wb.settled()
    second = (await wb.branch())[0].entry_id
    assert_version(project, 2)
    return [first, second]


def assert_version(project: Path, version: int) -> None:
    notes = (project / "notes.txt").read_text()
    if version == 1:
        assert notes == V1
        assert (project / "keep.txt").read_text() == "keep me\n"
        assert not (project / "extra.txt").exists()
    else:
        assert notes == V2
        assert (project / "extra.txt").read_text() == "extra\n"
        assert not (project / "keep.txt").exists()
    # The user's own files are never touched.
    assert (project / "mine.txt").read_text() == "my untracked notes\n"
    assert (project / "readme.md").read_text() == "# project\nuncommitted edit\n"
    assert (project / "debug.log").read_text() == "log\n"
