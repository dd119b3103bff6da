"""The shell walker's parser: tree-sitter-bash, loaded lean, and the node kinds the walker reads.

    parse(src)               the tree of a command; ShellError when bash would not accept it
    command_node_ids(tree)   every `command` node of a tree (the walker must visit them all)
    STATEMENTS, REDIRECTS    the node kinds that are statements and redirects

Lean on purpose: this runs inside the PreToolUse hook (stdlib + tree-sitter, loaded on the first
parse).
"""

from __future__ import annotations

import importlib.machinery
import os
from typing import Any

from zen.guard.shell.words import ShellError

_PARSER: Any = None


def _bash_language() -> Any:
    """tree-sitter-bash's language pointer. Importing the tree_sitter_bash package runs its
    `from importlib.resources import files` (tempfile, random, shutil, bz2, lzma: several ms of
    every hook call, for a highlights query zen never reads), so its compiled binding is loaded
    directly through the standard extension-module loader; the package import is the fallback."""
    try:
        spec = importlib.machinery.PathFinder.find_spec("tree_sitter_bash")
        if spec is not None and spec.submodule_search_locations:
            for folder in spec.submodule_search_locations:
                for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                    path = os.path.join(folder, "_binding" + suffix)
                    if os.path.isfile(path):
                        loader = importlib.machinery.ExtensionFileLoader("tree_sitter_bash._binding", path)
                        binding = loader.create_module(
                            importlib.machinery.ModuleSpec("tree_sitter_bash._binding", loader, origin=path))
                        loader.exec_module(binding)
                        return binding.language()
    except (ImportError, OSError, AttributeError):
        pass
    import tree_sitter_bash  # the package's own way (imports importlib.resources)

    return tree_sitter_bash.language()


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        # lean hook path: tree-sitter loads on the first parse, not when the guardian is imported
        import tree_sitter

        lang = tree_sitter.Language(_bash_language())
        query = tree_sitter.Query(lang, "(command) @c")
        _PARSER = (tree_sitter.Parser(lang), tree_sitter.QueryCursor(query))
    return _PARSER


def parse(src: str) -> Any:
    """The tree of `src`; ShellError when bash would not accept it (or tree-sitter cannot tell)."""
    p, _ = _parser()
    tree = p.parse(src.encode("utf-8", "surrogateescape"))
    if tree.root_node.has_error:
        raise ShellError("shell.parse", "the command does not parse as bash (unterminated quote, "
                         "bracket or heredoc?)")
    return tree


def command_node_ids(tree: Any) -> set[int]:
    _, cursor = _parser()
    caps = cursor.captures(tree.root_node)
    return {n.id for n in caps.get("c", ())}


STATEMENTS = frozenset({
    "command", "list", "pipeline", "subshell", "compound_statement", "redirected_statement",
    "if_statement", "while_statement", "for_statement", "c_style_for_statement", "case_statement",
    "function_definition", "negated_command", "declaration_command", "unset_command",
    "variable_assignment", "variable_assignments", "test_command",
})


REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
