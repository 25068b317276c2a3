"""The project of the session shown (issue 19), for the window: ``/`` completions,
template and skill expansion, the Context view, the folder's Instructions, and the
notice naming files that could not be used. Methods of `Workbench` (assigned there)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from desktop_agent.prompt import Problem
from desktop_agent.workbench._changes import NOTHING, Changes
from desktop_agent.workbench._open import WorkbenchError
from desktop_agent.workbench._project import NO_SESSION, Completion, ContextView, problems_notice

if TYPE_CHECKING:
    from desktop_agent.workbench._workbench import Workbench


def _folder(wb: Workbench) -> str | None:
    return (wb.session.metadata.cwd or None) if wb.session is not None else None


async def _expand(wb: Workbench, text: str) -> str:
    """``/template args`` and ``/skill:name`` as sent (the session keeps that, as
    Pi's does); files that could not be used are named in a notice."""
    text, problems = await wb.project.expand(wb._folder(), text)
    wb._name_problems(problems)
    return text


def _name_problems(wb: Workbench, problems: Sequence[Problem]) -> Changes:
    notice = problems_notice(problems)
    if notice is None:
        return wb.notify("project_files", None)
    path, problem, more = notice
    return wb.notify(
        "project_files",
        "Project file {path} {problem}{more}",
        path=path,
        problem=problem,
        more=more,
    )


async def _check_project(wb: Workbench, folder: str) -> None:
    """Name the folder's unusable files once it opens, before anything is sent."""
    problems = await wb.project.problems(folder)
    if wb._folder() == folder:
        wb._changed(wb._name_problems(problems))


async def _project_mcp(wb: Workbench, folder: str) -> None:
    offer = wb.mcp.offer_project(folder, wb.state.mcp_projects, wb._remember, wb.notify)
    wb._changed(await offer)


async def completions(wb: Workbench) -> list[Completion]:
    """The composer's ``/`` list: the app's commands, templates and skills."""
    return await wb.project.completions(wb._folder())


async def context_view(wb: Workbench) -> ContextView | None:
    """The Context view of the shown session's folder (None: no session)."""
    folder = wb._folder()
    if folder is None:
        return None
    tools = wb.harness.tool_lines() if wb.harness is not None else []
    view = await wb.project.view(folder, tools)
    wb._changed(wb._name_problems(view.report.problems))
    return view


async def set_instructions(wb: Workbench, text: str) -> Changes:
    """The shown folder's Instructions, used from the next turn on."""
    folder = wb._folder()
    if folder is None:
        raise WorkbenchError(NO_SESSION)
    wb.project.set_instructions(folder, text)  # saved like every setting, on the loop
    return NOTHING
