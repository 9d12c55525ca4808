"""The JSON Schema words the compiler knows, and what it does with each.

Draft 2020-12's vocabulary splits into annotations (read and ignored, as by the referee), keywords the
checker enforces, and keywords it refuses wherever they appear. Keywords outside the vocabulary are
annotations too, except the older drafts' assertions, whose meaning depends on the draft: refused, not
guessed. The formats the referee asserts are pinned here, so the referee and the compiler read one list.
"""

from __future__ import annotations

from structbench.regular import FORMAT_PATTERNS

# JSON Schema's seven type names, and the checker's kinds of value (a boolean is two words).
ALL_TYPES = frozenset({"object", "array", "string", "number", "integer", "boolean", "null"})
KINDS = ("object", "array", "string", "number", "true", "false", "null")

# The JSON Schema 2020-12 vocabulary, every keyword.
ANNOTATION_KEYWORDS = frozenset({
    "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "$comment",
    "$schema", "$id", "$vocabulary", "contentEncoding", "contentMediaType", "contentSchema",
})
ENFORCED_KEYWORDS = frozenset({
    "type", "enum", "const", "properties", "required", "additionalProperties", "patternProperties",
    "propertyNames", "minProperties", "maxProperties", "items", "prefixItems", "minItems", "maxItems",
    "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
    "multipleOf", "allOf", "anyOf", "oneOf", "not", "$ref", "$defs", "uniqueItems", "$anchor", "$dynamicAnchor",
    "dependentRequired", "dependentSchemas",
})
# Refused wherever they appear (some enforced keywords are refused in some forms: see the compiler).
UNSUPPORTED_KEYWORDS = frozenset({
    "if", "then", "else", "contains", "minContains", "maxContains", "unevaluatedItems", "unevaluatedProperties",
    "$dynamicRef",
})
VOCABULARY_2020_12 = ANNOTATION_KEYWORDS | ENFORCED_KEYWORDS | UNSUPPORTED_KEYWORDS
# Assertions of earlier drafts that 2020-12 (and so the referee) does not know: refused, not guessed.
LEGACY_ASSERTIONS = frozenset({"divisibleBy", "extends", "disallow"})
# Drafts 4-7's `dependencies`, which 2020-12 split into dependentRequired (a list) and dependentSchemas (a
# schema): read as those two, by the checker and by the referee (see structbench/bench/referees.py).
LEGACY_DEPENDENCIES = "dependencies"
# Where a schema keeps subschemas it only names for $ref.
DEFINITIONS = ("$defs", "definitions")

# The keywords a non-object satisfies whatever their value (see rewrites.exclusive_by_absence).
OBJECT_KEYWORDS = frozenset({"properties", "required", "additionalProperties", "patternProperties", "propertyNames",
                             "minProperties", "maxProperties", "dependentRequired", "dependentSchemas",
                             "dependencies"})

# The formats the referee asserts (jsonschema's FormatChecker for exactly these). Each needs only the
# standard library, or a declared dependency (rfc3339-validator: date-time, time; rfc3986-validator: uri,
# uri-reference; idna: idn-hostname). Any other format is an annotation, for the referee and the checker.
REFEREE_FORMATS = ("date", "time", "date-time", "email", "idn-email", "ipv4", "ipv6", "uuid", "uri",
                   "uri-reference", "regex", "idn-hostname")
# Those the checker enforces, as patterns; a referee format without one is refused.
CHECKED_FORMATS = tuple(FORMAT_PATTERNS)
