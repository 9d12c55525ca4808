"""`$ref` within one document: the one resolver, for the compiler and for anything that reads a schema's shape.

Only references into the document itself are followed (`#`, `#/$defs/...`, `#/definitions/...`, any JSON
pointer, its parts percent-decoded and unescaped as RFC 6901 says). :func:`resolve_ref` is the compiler's
strict reading (an error for what it cannot follow); :func:`follow_refs` is the lenient one for code that
only looks at a schema (the coverage experiment puts an instance's keys in its schema's order).
"""

from __future__ import annotations

from urllib.parse import unquote

from structbench.errors import InvalidSchema, StructbenchError, UnsupportedSchema


def resolve_ref(root, ref, path: str):
    """The subschema of `root` that `ref` points at. UnsupportedSchema for references outside the document
    or to anchors; InvalidSchema for a ref that is not a string or points at nothing (`path`: where it is)."""
    if not isinstance(ref, str):
        raise InvalidSchema(f"$ref must be a string at {path}")
    if not ref.startswith("#"):
        raise UnsupportedSchema("$ref", path, f"only references within the document (#...) are supported, not {ref!r}")
    pointer = ref[1:]
    if pointer and not pointer.startswith("/"):
        raise UnsupportedSchema("$ref", path, f"anchor references ({ref!r}) are not supported")
    target = root
    for part in pointer.split("/")[1:] if pointer else []:
        part = unquote(part).replace("~1", "/").replace("~0", "~")
        if isinstance(target, dict) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            raise InvalidSchema(f"$ref {ref!r} at {path} points at nothing")
    return target


def follow_refs(schema, root) -> dict:
    """The schema with its local `$ref` followed (through chains of them) to the schema it stands for; {} where
    there is nothing to read (not an object, a reference that points at nothing, a chain that loops).
    A reference outside the document is left as it is."""
    seen = set()
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and schema["$ref"].startswith("#"):
        ref = schema["$ref"]
        if ref in seen:
            return {}
        seen.add(ref)
        try:
            schema = resolve_ref(root, ref, "#")
        except StructbenchError:
            return {}
    return schema if isinstance(schema, dict) else {}


def mentions_ref(schema) -> bool:
    """Is there a $ref anywhere inside this schema?"""
    if isinstance(schema, dict):
        return "$ref" in schema or any(mentions_ref(v) for v in schema.values())
    if isinstance(schema, list):
        return any(mentions_ref(v) for v in schema)
    return False
