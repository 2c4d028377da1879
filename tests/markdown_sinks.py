"""Find Streamlit calls that render Markdown (or HTML) from something other than the safe path (ui/safe.py).

Read by tests/test_safe_text.py over ui/, pages/ and app.py. A Markdown-rendering parameter (see SINKS) passes when
its value is, by the source alone:

- a literal, or an f-string / `+` / `a if c else b` / `a or b` made only of passing parts;
- a call of the safe path (md with a literal template, plain, markdown, code, join, link, safe_markdown,
  safe_inline, code_inline), or a number (len, int, float, round, abs, sum), or `<passing>.format(<passing>...)`;
- a name bound (in its function, or else at module level) only to passing values, a parameter annotated `Md`, or
  an UPPER_CASE constant imported from the app's own modules.

A call is a Streamlit call when its receiver is `st`, or a name bound to what a Streamlit call returned (columns,
a status, a progress bar, `with st.status(...) as s`, `for col in cols`). Parameters annotated `Md` in the app's own
functions are sinks too, so `core.notice(message)` is checked where it is called. HTML goes to st.html only from
ui.text.highlight_html, a stream to st.write_stream only through escaped_stream, an address to st.link_button or
st.image only through safe_url (st.image also takes the app's own rendered PNG bytes, through rendered_png), and a
download's file name is a literal or ui.safe.download_name(...).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

WIDGETS = ("selectbox", "multiselect", "radio", "slider", "select_slider", "text_input", "text_area", "number_input",
           "date_input", "time_input", "checkbox", "toggle", "color_picker", "file_uploader", "camera_input",
           "audio_input", "segmented_control", "pills", "chat_input", "data_editor")
BUTTONS = ("button", "download_button", "link_button", "form_submit_button", "page_link")
# Streamlit function -> the parameters that render Markdown: (position or None, keyword). "*" = every positional.
SINKS: dict[str, tuple[tuple[int | None, str], ...]] = {
    **{name: ((0, "body"),) for name in ("markdown", "caption", "title", "header", "subheader", "success", "info",
                                         "warning", "error", "toast", "latex")},
    "write": ((None, "*"),),
    "status": ((0, "label"),),
    "update": ((None, "label"),),  # a status's update(label=...)
    "expander": ((0, "label"),),
    "popover": ((0, "label"),),
    "tabs": ((0, "tabs"),),
    "dialog": ((0, "title"),),
    "spinner": ((0, "text"),),
    "progress": ((1, "text"),),
    "metric": ((0, "label"), (1, "value"), (2, "delta")),
    **{name: ((0, "label"),) for name in BUTTONS},
    **{name: ((0, "label"),) for name in WIDGETS if name not in ("chat_input", "data_editor")},
    "Page": ((None, "title"),),
    "set_page_config": ((None, "page_title"),),
}
OPTION_SINKS = {"radio", "segmented_control", "pills"}  # their options (or format_func's result) render Markdown
HTML_SINKS = {"html": ((0, "body"),)}
STREAM_SINKS = {"write_stream": ((0, "stream"),)}
# Addresses the browser opens or fetches: a literal, or a URL ui.text.safe_url accepted.
URL_SINKS = {"link_button": ((1, "url"),), "image": ((0, "image"),), "audio": ((0, "data"),),
             "video": ((0, "data"),), "logo": ((0, "image"),)}
URL_PRODUCERS = {"safe_url"}
# st.image may also take the PNG bytes the app rendered itself (a PDF page: ui.page_view.rendered_png), never a
# string, so never an address.
IMAGE_PRODUCERS = URL_PRODUCERS | {"rendered_png"}
MARKDOWN_PRODUCERS = {"md", "plain", "markdown", "code", "join", "link", "safe_markdown", "safe_inline",
                      "code_inline"}
HTML_PRODUCERS = {"highlight_html"}
STREAM_PRODUCERS = {"escaped_stream"}
NUMBERS = {"len", "int", "float", "round", "abs", "sum"}
FILE_NAMES = {"download_name"}


@dataclass
class Finding:
    path: str
    line: int
    call: str
    param: str
    source: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.call}({self.param}=...) gets {self.source!r}"


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _names_in(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _names_in(elt)]
    if isinstance(target, ast.Starred):
        return _names_in(target.value)
    if isinstance(target, (ast.Subscript, ast.Attribute)):
        root = _root(target)
        return [root.id] if isinstance(root, ast.Name) else []
    return []


def _assigned(name: str, target: ast.AST, value: ast.AST) -> ast.AST | None:
    """The value `name` gets from `target = value` (None when it cannot be told: an item, a call's tuple)."""
    if isinstance(target, ast.Name):
        return value
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) and len(
            target.elts) == len(value.elts):
        for t, v in zip(target.elts, value.elts):
            if name in _names_in(t):
                return _assigned(name, t, v)
    return None


def _is_md(annotation: ast.AST | None) -> bool:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return annotation.value.strip() == "Md"
    return isinstance(annotation, ast.Name) and annotation.id == "Md" or (
        isinstance(annotation, ast.Attribute) and annotation.attr == "Md")


def _params(fn) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs,
            *([a.kwarg] if a.kwarg else [])]


def md_parameters(trees: dict[str, ast.Module]) -> dict[str, tuple[tuple[int | None, str], ...]]:
    """The app's own functions' parameters annotated `Md`: name -> (position, keyword) pairs."""
    out: dict[str, tuple[tuple[int | None, str], ...]] = {}
    for tree in trees.values():
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                positional = [*fn.args.posonlyargs, *fn.args.args]
                pairs = [(positional.index(p) if p in positional else None, p.arg)
                         for p in _params(fn) if _is_md(p.annotation)]
                if pairs:
                    out[fn.name] = tuple(pairs)
    return out


class ModuleCheck:
    def __init__(self, path: str, tree: ast.Module, own_sinks: dict):
        self.path, self.tree, self.own_sinks = path, tree, own_sinks
        self.parent: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
        self.streamlit_names = self._streamlit_names()
        self.findings: list[Finding] = []
        self.calls_checked = 0

    # ---- which calls are Streamlit's
    def _from_streamlit(self, value: ast.AST, known: set[str]) -> bool:
        root = _root(value)
        return isinstance(root, ast.Name) and (root.id == "st" or root.id in known) and isinstance(value, (
            ast.Call, ast.Subscript, ast.Name))

    def _streamlit_names(self) -> set[str]:
        known: set[str] = set()
        for _ in range(3):  # names bound from names bound from st...
            for node in ast.walk(self.tree):
                if isinstance(node, ast.Assign) and self._from_streamlit(node.value, known):
                    for target in node.targets:
                        known.update(_names_in(target))
                elif isinstance(node, ast.withitem) and node.optional_vars is not None and self._from_streamlit(
                        node.context_expr, known):
                    known.update(_names_in(node.optional_vars))
                elif isinstance(node, ast.For) and any(isinstance(n, ast.Name) and n.id in known
                                                       for n in ast.walk(node.iter)):
                    known.update(_names_in(node.target))
        return known

    def _is_streamlit_call(self, call: ast.Call) -> bool:
        if not isinstance(call.func, ast.Attribute):
            return False
        root = _root(call.func.value)
        return isinstance(root, ast.Name) and (root.id == "st" or root.id in self.streamlit_names)

    # ---- what passes
    def _scopes(self, node: ast.AST) -> list[ast.AST]:
        """Enclosing functions, innermost first, then the module."""
        out = []
        while node in self.parent:
            node = self.parent[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                out.append(node)
        return [*out, self.tree]

    @staticmethod
    def _own_nodes(scope: ast.AST):
        """The nodes of a scope, not those of functions defined inside it."""
        stack = list(ast.iter_child_nodes(scope))
        while stack:
            node = stack.pop()
            yield node
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                stack.extend(ast.iter_child_nodes(node))

    def _bindings(self, name: str, scope: ast.AST) -> list[ast.AST] | None:
        """The values a name is bound to in a scope ([None] for a binding that is never safe), or None if unbound."""
        values: list = []
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for p in _params(scope):
                if p.arg == name:
                    return [] if _is_md(getattr(p, "annotation", None)) else [None]
        for node in self._own_nodes(scope):
            if isinstance(node, ast.Assign) and any(name in _names_in(t) for t in node.targets):
                values.extend(_assigned(name, t, node.value) for t in node.targets if name in _names_in(t))
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and name in _names_in(node.target):
                values.append(node.value if isinstance(node.target, ast.Name) else None)
            elif isinstance(node, (ast.For, ast.comprehension)) and name in _names_in(node.target):
                values.append(None)
            elif isinstance(node, ast.withitem) and node.optional_vars is not None and name in _names_in(
                    node.optional_vars):
                values.append(None)
            elif isinstance(node, ast.NamedExpr) and node.target.id == name:
                values.append(node.value)
            elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                    (a.asname or a.name) == name for a in node.names):
                own_constant = isinstance(node, ast.ImportFrom) and (node.level or 0) > 0 and name.isupper()
                values.append(ast.Constant("") if own_constant else None)
            elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
                values.append(None)
        return values or None

    def passes(self, node: ast.AST | None, producers: set[str], seen: frozenset = frozenset()) -> bool:
        ok = lambda n: self.passes(n, producers, seen)  # noqa: E731
        if node is None:
            return False
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (str, int, float, bool)) or node.value is None
        if isinstance(node, ast.JoinedStr):
            return all(ok(v.value) for v in node.values if isinstance(v, ast.FormattedValue))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return ok(node.left) and ok(node.right)
        if isinstance(node, ast.IfExp):
            return ok(node.body) and ok(node.orelse)
        if isinstance(node, ast.BoolOp):
            return all(ok(v) for v in node.values)
        if isinstance(node, (ast.List, ast.Tuple)):
            return all(ok(e) for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(ok(v) for v in node.values)
        if isinstance(node, ast.Subscript):  # an item of a passing container (a literal dict of labels)
            return ok(node.value)
        if isinstance(node, ast.Lambda):
            return ok(node.body)
        if isinstance(node, ast.Call):
            return self._call_passes(node, producers, ok)
        if isinstance(node, ast.Name):
            return self._name_passes(node, producers, seen)
        return False

    def _call_passes(self, node: ast.Call, producers: set[str], ok) -> bool:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else (
            func.attr if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            and func.value.id in ("safe", "text") else None)
        if name == "md":  # the template must be the app's own
            return bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
        if name == "join":
            return bool(node.args) and ok(node.args[0])
        if name in producers or name in NUMBERS:
            return True
        if isinstance(func, ast.Attribute) and func.attr == "format":
            return ok(func.value) and all(ok(a) for a in node.args) and all(ok(k.value) for k in node.keywords)
        return False

    def _name_passes(self, node: ast.Name, producers: set[str], seen: frozenset) -> bool:
        if node.id in seen:
            return True  # a cycle (x = x + ...): decided by the other bindings
        for scope in self._scopes(node):
            values = self._bindings(node.id, scope)
            if values is not None:
                return all(v is not None and self.passes(v, producers, seen | {node.id}) for v in values)
        return False

    # ---- the walk
    def _argument(self, call: ast.Call, position: int | None, keyword: str):
        if keyword == "*":
            return list(call.args)
        found = [k.value for k in call.keywords if k.arg == keyword]
        if position is not None and len(call.args) > position and not isinstance(call.args[position], ast.Starred):
            found.append(call.args[position])
        return found

    def _check(self, call: ast.Call, name: str, params, producers: set[str]) -> None:
        self.calls_checked += 1
        for position, keyword in params:
            for value in self._argument(call, position, keyword):
                if not self.passes(value, producers):
                    self._report(call, name, keyword, value)

    def _report(self, call: ast.Call, name: str, param: str, value: ast.AST) -> None:
        self.findings.append(Finding(self.path, value.lineno, name, param, ast.unparse(value)[:120]))

    def run(self) -> "ModuleCheck":
        for node in ast.walk(self.tree):
            if isinstance(node, ast.keyword) and node.arg == "unsafe_allow_html":
                if not (isinstance(node.value, ast.Constant) and node.value.value is False):
                    self.findings.append(Finding(self.path, node.value.lineno, "unsafe_allow_html", "", "True"))
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else (func.id if isinstance(func, ast.Name) else "")
            if fname in self.own_sinks and not self._is_streamlit_call(node):
                self._check(node, fname, self.own_sinks[fname], MARKDOWN_PRODUCERS)
            if not self._is_streamlit_call(node):
                continue
            if fname in SINKS:
                self._check(node, fname, SINKS[fname], MARKDOWN_PRODUCERS)
            if fname in HTML_SINKS:
                self._check(node, fname, HTML_SINKS[fname], HTML_PRODUCERS)
            if fname in STREAM_SINKS:
                self._check(node, fname, STREAM_SINKS[fname], STREAM_PRODUCERS)
            if fname in URL_SINKS:
                self._check(node, fname, URL_SINKS[fname], IMAGE_PRODUCERS if fname == "image" else URL_PRODUCERS)
            if fname in OPTION_SINKS:
                formatter = self._argument(node, None, "format_func")
                for value in formatter or self._argument(node, 1, "options"):
                    ok = (isinstance(value, ast.Name) and value.id in MARKDOWN_PRODUCERS) or self.passes(
                        value, MARKDOWN_PRODUCERS)
                    if not ok:
                        self._report(node, fname, "format_func" if formatter else "options", value)
            for value in self._argument(node, None, "help"):
                if not self.passes(value, MARKDOWN_PRODUCERS):
                    self._report(node, fname, "help", value)
            for value in self._argument(node, None, "file_name"):
                literal = isinstance(value, ast.Constant) and isinstance(value.value, str)
                named = isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and (
                    value.func.id in FILE_NAMES)
                if not (literal or named):
                    self._report(node, fname, "file_name", value)
        return self


def check_files(paths: list[Path], root: Path) -> tuple[list[Finding], int]:
    """Every finding in these files, and how many sink calls were checked."""
    trees = {str(p.relative_to(root)): ast.parse(p.read_text(encoding="utf-8"), filename=str(p)) for p in paths}
    own = md_parameters(trees)
    findings: list[Finding] = []
    checked = 0
    for path, tree in trees.items():
        check = ModuleCheck(path, tree, own).run()
        findings.extend(check.findings)
        checked += check.calls_checked
    return findings, checked
