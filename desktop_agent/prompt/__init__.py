"""The system prompt and what goes into it, as the Pi CLI builds it (ARCHITECTURE.md §1).

`ProjectPrompt` reads a project folder's context files (``AGENTS.md``/``CLAUDE.md`` from
the global folders and from the filesystem root down to the working folder),
``SYSTEM.md``/``APPEND_SYSTEM.md``, skills and prompt templates, re-reading a file only
when it changed, and assembles the system prompt for the tools that are on
(`ToolLine`: any tool, built-in or not). `ProjectPrompt.expand` turns ``/template args``
and ``/skill:name args`` into what is sent. Every file that could not be used as it is
becomes a `Problem` naming it. Qt-free; imports nothing of ours (the harness passes
the tools as `ToolLine`s).
"""

from desktop_agent.prompt._assemble import (
    ContextText,
    PromptSource,
    ToolLine,
    assemble,
    base_prompt,
    tool_line,
)
from desktop_agent.prompt._files import MAX_CONTEXT_BYTES, FileCache, FileText, Problem
from desktop_agent.prompt._frontmatter import FrontMatterError, split_front_matter
from desktop_agent.prompt._project import (
    CONTEXT_NAMES,
    INSTRUCTIONS_LABEL,
    Parts,
    ProjectPrompt,
    PromptReport,
    Source,
    estimate_tokens,
)
from desktop_agent.prompt._skills import Skill, expand_skill_command, format_skills
from desktop_agent.prompt._templates import (
    Template,
    expand_template,
    parse_command_args,
    substitute_args,
    unknown_placeholders,
)

__all__ = [
    "CONTEXT_NAMES",
    "INSTRUCTIONS_LABEL",
    "MAX_CONTEXT_BYTES",
    "ContextText",
    "FileCache",
    "FileText",
    "FrontMatterError",
    "Parts",
    "Problem",
    "ProjectPrompt",
    "PromptReport",
    "PromptSource",
    "Skill",
    "Source",
    "Template",
    "ToolLine",
    "assemble",
    "base_prompt",
    "estimate_tokens",
    "expand_skill_command",
    "expand_template",
    "format_skills",
    "parse_command_args",
    "split_front_matter",
    "substitute_args",
    "tool_line",
    "unknown_placeholders",
]
