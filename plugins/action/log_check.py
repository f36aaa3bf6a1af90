"""log_check: read a saved log with a LogProfile on the controller, as a measurement would (logs/log_check.py)."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import (
    builtin_profile,
    builtin_profiles,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.log_check import check_log
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.log_lines import LogProfileError
from ansible_collections.cre.certification.plugins.modules.log_check import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.documents import load_documents
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction


def _profile(args: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The LogProfile object and the option it came from."""
    if args["profile"] is not None:
        found = builtin_profile(args["profile"])
        if found is None:
            names = ", ".join(p["metadata"]["name"] for p in builtin_profiles())
            raise InputError("profile", f"no built-in LogProfile is named {args['profile']!r} (built-in: {names}); "
                                        "give profile_file for a profile of your own")
        return found, "profile"
    docs = load_documents(args["profile_file"], "profile_file")
    if len(docs) != 1 or not isinstance(docs[0], dict) or docs[0].get("kind") != "LogProfile":
        raise InputError("profile_file", f"{args['profile_file']} must hold exactly one LogProfile object")
    return docs[0], "profile_file"


def check_face(args: dict[str, Any]) -> dict[str, Any]:
    """The task result for validated arguments (paths already resolved)."""
    profile, option = _profile(args)
    try:
        with open(args["src"], encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as err:
        raise InputError("src", f"cannot read {args['src']}: {err.strerror}") from None
    training = [p for p in builtin_profiles() if "trainingStep" in p["spec"]["patterns"]]
    if option == "profile_file":
        training.append(profile)
    try:
        out = check_log(text, profile, args["test_type"], args["thresholds"], training)
    except LogProfileError as err:
        name = (profile.get("metadata") or {}).get("name", "")
        raise InputError(option, f"LogProfile {name} cannot read logs: {err}; fix its patterns") from None
    return {"changed": False, **out}


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True  # reads local files only

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self.local_paths(args, "src", "profile_file")
        return check_face(args)
