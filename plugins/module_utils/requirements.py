"""The Python libraries the controller side needs (requirements.txt), and a stand-in for one that is missing.

Every face checks them before it runs (`missing`), so a controller without them gets one line naming what to
install, as missing_required_lib words it, instead of a traceback. Until then a module that imports a missing
library gets `ABSENT` in its place: it still imports (ansible-test's import test, ansible-doc), and no code that
would use it runs.
"""
from __future__ import annotations

from importlib.util import find_spec
from typing import Any

# import name -> what to install (requirements.txt)
REQUIRED = {"pydantic": "pydantic", "kubernetes": "kubernetes", "celpy": "cel-python", "jsonpatch": "jsonpatch",
            "jsonpointer": "jsonpointer", "durationpy": "durationpy", "yaml": "PyYAML", "urllib3": "urllib3"}


def missing() -> list[str]:
    """What to install of requirements.txt, in its order; [] when the controller has everything."""
    return [package for module, package in REQUIRED.items() if not _present(module)]


def _present(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a broken install, or an import blocked by a None in sys.modules
        return False


class Absent:
    """A missing library's name: a base class, a call, a subscript, an attribute or a union of it gives itself, so
    the definitions a module makes at import time still go through."""

    def __call__(self, *_args: Any, **_kwargs: Any) -> Absent:
        return self

    def __getattr__(self, _name: str) -> Absent:
        return self

    def __getitem__(self, _key: Any) -> Absent:
        return self

    def __or__(self, _other: Any) -> Absent:
        return self

    __ror__ = __or__

    def __mro_entries__(self, _bases: tuple[Any, ...]) -> tuple[type, ...]:
        return (object,)


ABSENT: Any = Absent()
