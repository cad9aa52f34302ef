#!/usr/bin/env python3
"""Checks the documentation: README.md is the front door, every link resolves.

- README.md has at most 320 lines and names both front-door commands,
  `make demo` and `make test`.
- Every relative link in README.md, docs/*.md, schemas/README.md and
  deploy/README.md (`[text](path)`, `[text](path#anchor)`, `[text](#anchor)`,
  images too) points at a file or directory that exists, and every `#anchor`
  matches a heading of the target Markdown file, with GitHub's anchor rules
  (lowercase, punctuation dropped, spaces to hyphens, `-1`, `-2`, … for
  repeated headings). Links inside code blocks and code spans are not links.

Run from anywhere: python3 scripts/check-docs.py. Exit 1 with one line per
problem.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README_MAX_LINES = 320
FRONT_DOOR_COMMANDS = ("make demo", "make test")

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEMES = ("http://", "https://", "mailto:", "ftp://")


def doc_files():
    files = [ROOT / "README.md"]
    files += sorted((ROOT / "docs").glob("*.md"))
    for extra in ("schemas/README.md", "deploy/README.md"):
        if (ROOT / extra).is_file():
            files.append(ROOT / extra)
    return files


def prose_lines(text):
    """(line number, line) outside fenced code blocks, code spans blanked."""
    fence = None
    for number, line in enumerate(text.split("\n"), 1):
        stripped = line.lstrip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if fence:
            if marker and stripped.startswith(fence) and not stripped[len(fence):].strip("`~").strip():
                fence = None
            continue
        if marker:
            fence = marker.group(1)
            continue
        yield number, blank_code_spans(line)


def blank_code_spans(line):
    out, i = [], 0
    while i < len(line):
        if line[i] == "`":
            run = len(line[i:]) - len(line[i:].lstrip("`"))
            ticks = line[i:i + run]
            end = line.find(ticks, i + run)
            if end != -1:
                out.append(" " * (end + run - i))
                i = end + run
                continue
            out.append(ticks)
            i += run
            continue
        out.append(line[i])
        i += 1
    return "".join(out)


def github_slug(heading):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links → their text
    text = re.sub(r"<[^>]+>", "", text)                          # inline HTML
    text = text.replace("`", "")
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        seen, result = {}, set()
        fence = None
        for line in path.read_text(encoding="utf-8").split("\n"):
            stripped = line.lstrip()
            marker = re.match(r"(`{3,}|~{3,})", stripped)
            if fence:
                if marker and stripped.startswith(fence):
                    fence = None
                continue
            if marker:
                fence = marker.group(1)
                continue
            m = HEADING.match(line)
            if not m:
                continue
            slug = github_slug(m.group(2))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            result.add(slug if n == 0 else f"{slug}-{n}")
        cache[path] = result
    return cache[path]


def main():
    problems = []
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if lines > README_MAX_LINES:
        problems.append(f"README.md: {lines} lines, more than {README_MAX_LINES}: move reference material to docs/")
    for command in FRONT_DOOR_COMMANDS:
        if command not in text:
            problems.append(f"README.md: does not mention `{command}`")

    checked = 0
    files = doc_files()
    for path in files:
        rel = path.relative_to(ROOT)
        for number, line in prose_lines(path.read_text(encoding="utf-8")):
            for m in LINK.finditer(line):
                target = m.group(1)
                if target.startswith(SCHEMES):
                    continue
                checked += 1
                where = f"{rel}:{number}: ({target})"
                file_part, _, anchor = target.partition("#")
                dest = (path.parent / file_part).resolve() if file_part else path
                if file_part and not dest.exists():
                    problems.append(f"{where}: {file_part} does not exist")
                    continue
                if not anchor:
                    continue
                if dest.is_dir() or dest.suffix.lower() != ".md":
                    problems.append(f"{where}: an anchor into a file that is not Markdown")
                    continue
                if anchor not in anchors(dest):
                    problems.append(f"{where}: no heading with anchor #{anchor} in {dest.relative_to(ROOT)}")

    for p in problems:
        print(f"check-docs: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"check-docs: README.md {lines} lines (at most {README_MAX_LINES}), "
          f"{checked} links in {len(files)} files resolve")
    return 0


if __name__ == "__main__":
    sys.exit(main())
