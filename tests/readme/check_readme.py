#!/usr/bin/env python3
"""Checks that README.md tells the truth about the tree.

- The commands of its first code block (the two at the top) exist and are executable.
- Every path it names in backticks under one of the project's folders exists (a `*` pattern
  must match something).
- Every folder under src/ and src/backend/ is named in it (the source map lists every layer),
  and so is every top-level folder that holds sources.

Usage: check_readme.py [ROOT]   (default: the checkout holding this script)
"""
import glob
import os
import re
import sys

TOP = ("src/", "tests/", "docs/", "scripts/", "bench/", "tools/", "include/", "simt/", "cmake/",
       "examples/", ".ci/")


def main() -> int:
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    root = os.path.abspath(root)
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        text = f.read()
    problems = []

    first_block = re.search(r"```[a-z]*\n(.*?)```", text, re.S)
    if not first_block:
        problems.append("no code block with the main commands")
    else:
        commands = [ln.split()[0] for ln in first_block.group(1).splitlines() if ln.strip()]
        if len(commands) < 2:
            problems.append("the first code block should hold the two main commands")
        for c in commands:
            p = os.path.join(root, c)
            if not (os.path.isfile(p) and os.access(p, os.X_OK)):
                problems.append(f"main command '{c}' is not an executable file")

    named = set()
    for token in re.findall(r"`([^`\n]+)`", text):
        word = token.split()[0].rstrip(",.;:)")
        if not word.startswith(TOP):
            continue
        named.add(word.rstrip("/") + "/" if os.path.isdir(os.path.join(root, word)) else word)
        if "*" in word:
            if not glob.glob(os.path.join(root, word)):
                problems.append(f"'{word}' matches nothing")
        elif not os.path.exists(os.path.join(root, word)):
            problems.append(f"'{word}' does not exist")

    def must_name(folder: str) -> None:
        if folder not in named:
            problems.append(f"folder '{folder}' is not in the README's source map")

    for parent in ("src", "src/backend"):
        for d in sorted(os.listdir(os.path.join(root, parent))):
            if os.path.isdir(os.path.join(root, parent, d)):
                must_name(f"{parent}/{d}/")
    for d in ("bench", "cmake", "docs", "examples", "include/ember", "scripts", "simt", "tests",
              "tools/ember"):
        if os.path.isdir(os.path.join(root, d)):
            must_name(d + "/")

    for p in problems:
        print(f"[readme] {p}")
    if problems:
        print(f"[readme] {len(problems)} problem(s) in {os.path.join(root, 'README.md')}")
        return 1
    print(f"[readme] commands and {len(named)} path(s) checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())
