"""The model and thinking level of the session shown, and what model discovery changes
(a session waiting for its model gets it). Methods of `Workbench` (assigned there)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from desktop_agent.workbench._changes import NOTHING, Changes
from desktop_agent.workbench._open import WorkbenchError

if TYPE_CHECKING:
    from desktop_agent.workbench._workbench import Workbench


async def choose_model(wb: Workbench, key: str) -> Changes:
    model = wb.models.registry.get(key)
    if model is None and wb.harness is not None:  # typed: /model provider/id
        raise WorkbenchError(
            f"There is no model {key!r}: give it as provider/id, as the model list has it."
        )
    if model is None or wb.shown is None:
        return NOTHING
    return await wb.shown.choose_model(model)


async def choose_thinking(wb: Workbench, level: str) -> Changes:
    if wb.harness is not None:
        await wb.harness.set_thinking_level(level)
    return wb._changed(Changes(models=True))


def _on_models_changed(wb: Workbench) -> None:
    """Discovery or a new key: a session waiting for its model may get it now."""
    problems = wb.models.problems
    wb.notify("servers", " ".join(problems[n] for n in sorted(problems)) or None)
    shown, harness = wb.shown, wb.harness
    needs = harness is not None and (harness.model is None or "model" in wb.notices)
    if needs and shown is not None and shown.idle:
        wb.spawn(shown.restart_harness())
    else:
        wb._changed(Changes(models=True, notices=True))


async def retry_servers(wb: Workbench) -> Changes:
    """List the configured servers again (the "Try again" of a model notice): a session
    whose server now answers gets its own model back."""
    await wb.models.discover()
    wb._on_models_changed()
    return Changes(models=True, notices=True)


async def refresh_models(wb: Workbench) -> Changes:
    """List every configured server and the usual local ports again ("Refresh
    models", and after Settings)."""
    await wb.models.discover()
    problems = [wb.models.problems[n] for n in wb.models.servers() if n in wb.models.problems]
    changes = wb.notify("servers", " ".join(problems) or None)
    wb._on_models_changed()
    return wb._changed(changes | Changes(models=True, notices=True))
