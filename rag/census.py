"""A census of the engine's hand-written language rules, so that their number can only fall.

Counted per module of rag/: regex alternatives (each pattern passed to a `re` function counts one, plus one for
every `|` in its literal text), word-list entries (a literal list, tuple or set of four or more word-like strings,
or a `"a b c d".split()`), and phrase branches (an `if` / `elif` whose test runs a pattern or asks whether a literal
string is in something). `CEILING_PATH` holds the most each total may reach; tests/test_census.py fails above it.
Closed vocabularies (months, forms, Item numbers) are counted too: the ceiling is on the whole.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from dataclasses import dataclass
from pathlib import Path

RAG_DIR = Path(__file__).parent
CEILING_PATH = RAG_DIR / "data" / "census_ceiling.json"
# What runs a pattern: the functions of `re` and the methods of a compiled pattern, read from `re` itself.
_RE_FUNCTIONS = {name for name in dir(re) if inspect.isfunction(getattr(re, name)) and not name.startswith("_")
                 and name != "escape"}
_PATTERN_METHODS = {name for name in dir(re.Pattern) if callable(getattr(re.Pattern, name)) and not name.startswith("_")
                    and name != "scanner"}
KINDS = ("alternatives", "word_entries", "phrase_branches")


@dataclass
class Counts:
    alternatives: int = 0
    word_entries: int = 0
    phrase_branches: int = 0

    def add(self, other: Counts) -> None:
        for kind in KINDS:
            setattr(self, kind, getattr(self, kind) + getattr(other, kind))

    def as_dict(self) -> dict[str, int]:
        return {kind: getattr(self, kind) for kind in KINDS}


def _literals(node: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def _is_word(text: str) -> bool:
    return 0 < len(text) <= 40 and any(c.isalpha() for c in text) and all(c.isalpha() or c in " -'&." for c in text)


def _regex_alternatives(node: ast.Call) -> int:
    func = node.func
    if not (isinstance(func, ast.Attribute) and func.attr in _RE_FUNCTIONS and isinstance(func.value, ast.Name)
            and func.value.id == "re" and node.args):
        return 0
    parts = _literals(node.args[0])
    return 1 + sum(part.count("|") for part in parts) if parts else 0


def _word_entries(node: ast.AST) -> int:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and len(node.elts) >= 4 and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) and _is_word(e.value) for e in node.elts):
        return len(node.elts)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "split"
            and not node.args and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str)):
        words = node.func.value.value.split()
        if len(words) >= 4 and all(_is_word(w) for w in words):
            return len(words)
    return 0


def _is_phrase_test(test: ast.AST) -> bool:
    for node in ast.walk(test):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PATTERN_METHODS:
            return True
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) and (
                isinstance(node.left, ast.Constant) and isinstance(node.left.value, str) and node.left.value.strip()):
            return True
    return False


def census_source(text: str) -> Counts:
    counts = Counts()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return counts
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            counts.alternatives += _regex_alternatives(node)
        counts.word_entries += _word_entries(node)
        if isinstance(node, ast.If) and _is_phrase_test(node.test):
            counts.phrase_branches += 1
    return counts


def census(root: Path = RAG_DIR) -> dict[str, Counts]:
    """Counts per module, by path relative to `root`'s parent ("rag/question.py")."""
    return {str(path.relative_to(root.parent)): census_source(path.read_text(encoding="utf-8"))
            for path in sorted(root.rglob("*.py"))}


def totals(per_module: dict[str, Counts]) -> Counts:
    whole = Counts()
    for counts in per_module.values():
        whole.add(counts)
    return whole


def ceiling() -> dict[str, int]:
    return json.loads(CEILING_PATH.read_text(encoding="utf-8"))


def report(per_module: dict[str, Counts], top: int | None = None) -> str:
    """A table: the modules with most rules first, then the totals beside the ceiling."""
    rows = sorted(per_module.items(), key=lambda item: -sum(item[1].as_dict().values()))
    rows = [(name, c) for name, c in rows if any(c.as_dict().values())][:top]
    width = max([len(name) for name, _ in rows] + [len("total")])
    lines = [f"{'module':<{width}}  alternatives  word_entries  phrase_branches"]
    lines += [f"{name:<{width}}  {c.alternatives:>12}  {c.word_entries:>12}  {c.phrase_branches:>15}" for name, c in rows]
    whole, most = totals(per_module), ceiling()
    lines.append(f"{'total':<{width}}  {whole.alternatives:>12}  {whole.word_entries:>12}  {whole.phrase_branches:>15}")
    lines.append(f"{'ceiling':<{width}}  {most['alternatives']:>12}  {most['word_entries']:>12}  "
                 f"{most['phrase_branches']:>15}")
    return "\n".join(lines)
