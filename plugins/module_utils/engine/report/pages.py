"""The Jinja2 environment the HTML pages render in: the templates beside this module (templates/, shipped with the
collection), autoescape on, an undefined name an error. Jinja2 (and its MarkupSafe) come with ansible-core."""
from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

try:
    import jinja2
    from markupsafe import Markup, escape
except ImportError:  # ansible-core brings them; ansible-test's import test runs without them (requirements.py)
    from ...requirements import ABSENT as Markup
    from ...requirements import ABSENT as escape
    from ...requirements import ABSENT as jinja2  # type: ignore[no-redef]

TEMPLATES = Path(__file__).resolve().parent / "templates"
STATUS_CLASSES = ("Succeeded", "Failed", "Passed", "Skipped", "Pending", "Running", "InProgress")


@cache
def environment() -> Any:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.globals["status_classes"] = STATUS_CLASSES
    return env


def render(template: str, **context: Any) -> str:
    return str(environment().get_template(template).render(**context))


def markup(text: str) -> Any:
    """HTML or SVG built by the pure picture functions (which escape every value), kept as it is."""
    return Markup(text)


def esc(value: Any) -> str:
    """A value as HTML text, escaped as the templates escape it."""
    return str(escape(str(value)))
