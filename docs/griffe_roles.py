"""A Griffe extension for the API page: Sphinx cross-reference roles in docstrings as code.

The package's docstrings write ``:class:`WorkerPythonError``` and ``:meth:`lag```, as Sphinx
reads them; mkdocstrings renders Markdown, where they would show as typed. This turns each role
into a code span (``~`` keeps the last dotted part, as in Sphinx), and reStructuredText's
"a literal block follows" marker ``::`` into ``:`` at the end of a paragraph (a line holding
only ``::`` goes).
"""

from __future__ import annotations

import re
from typing import Any

from griffe import Extension

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|attr|mod|exc|data|obj|const):`(~?)([^`]+)`")
_LITERAL_ALONE = re.compile(r"^[ \t]*::[ \t]*\n", re.MULTILINE)
_LITERAL = re.compile(r"::$", re.MULTILINE)


def _code(match: re.Match[str]) -> str:
    target = match[2].split(".")[-1] if match[1] else match[2]
    return f"`{target}`"


class SphinxRoles(Extension):  # type: ignore[misc]
    def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            text = _ROLE.sub(_code, obj.docstring.value)
            obj.docstring.value = _LITERAL.sub(":", _LITERAL_ALONE.sub("", text))
