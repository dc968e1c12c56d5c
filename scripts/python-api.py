#!/usr/bin/env python3
"""Prints the Python package's API reference as Markdown, from its docstrings and
signatures (the book's docs/src/python-api.md; a test checks that the two agree)."""

import inspect

import sketchlog


def signature(obj):
    text = getattr(obj, "__text_signature__", None)
    if text:
        return text.replace("$module, ", "").replace("$self, ", "").replace("($self)", "()") \
            .replace("$cls, ", "").replace("($module)", "()")
    try:
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return "(...)"


def doc(obj):
    return inspect.cleandoc(obj.__doc__ or "").strip()


def main():
    out = ["# Python API reference", "",
           "Generated from the package's docstrings by `scripts/python-api.py`.", ""]
    for name in sketchlog.__all__:
        obj = getattr(sketchlog, name)
        if name.startswith("__") or isinstance(obj, str):
            continue
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            out += [f"## class `{name}`", "", doc(obj), ""]
            for member, raw in sorted(vars(obj).items()):
                if member.startswith("_") and member not in ("__call__", "_repr_svg_"):
                    continue
                value = getattr(obj, member)
                kind = "property " if inspect.isdatadescriptor(raw) else ""
                if kind:
                    value = raw
                if not doc(value) or doc(value).startswith("Call self as a function"):
                    continue
                sig = "" if kind else signature(value)
                out += [f"- {kind}`{member}{sig}`: {' '.join(doc(value).split())}"]
            out.append("")
        elif inspect.isclass(obj):
            out += [f"## exception `{name}`", "", doc(obj), ""]
        else:
            out += [f"## `{name}{signature(obj)}`", "", doc(obj), ""]
    print("\n".join(out).rstrip())


if __name__ == "__main__":
    main()
