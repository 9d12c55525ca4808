"""String formats (JSON Schema's `format`) as patterns: dates, times, addresses, identifiers.

Each is a regular language the checker can enforce while generating; where the referee's check is
looser (email: "contains @"), the pattern is a stricter, usual shape, so an accepted text always passes.
"""

from __future__ import annotations

import functools

from structbench.regular.automata import trim
from structbench.regular.dfa import DFA, compile_pattern

_YEAR = r"(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})"  # 0001-9999
_LEAP = r"(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DATE = (rf"(?:{_YEAR}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)"
         rf"|(?:0[13578]|1[02])-31)|{_LEAP}-02-29)")
_TIME = r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]+)?(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
_IPV4 = rf"{_OCTET}(?:\.{_OCTET}){{3}}"
_H16 = r"[0-9a-fA-F]{1,4}"
_LS32 = rf"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = ("(?:" + "|".join([
    rf"(?:{_H16}:){{6}}{_LS32}",
    rf"::(?:{_H16}:){{5}}{_LS32}",
    rf"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
    rf"(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}",
    rf"(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}",
    rf"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
    rf"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
    rf"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
    rf"(?:(?:{_H16}:){{0,6}}{_H16})?::",
]) + ")")
_HEX = "[0-9a-fA-F]"
_UUID = rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}"
# RFC 3986 URI (absolute, with a scheme), without IP-literal hosts: a subset of what rfc3986-validator accepts.
_PCT = rf"%{_HEX}{_HEX}"
_UNRES_SUB = r"[A-Za-z0-9\-._~!$&'()*+,;=]"
_PCHAR = rf"(?:{_UNRES_SUB}|{_PCT}|[:@])"
_URI = (rf"[A-Za-z][A-Za-z0-9+\-.]*:"
        rf"(?://(?:(?:{_UNRES_SUB}|{_PCT}|:)*@)?(?:{_UNRES_SUB}|{_PCT})*(?::[0-9]*)?(?:/{_PCHAR}*)*"
        rf"|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?|{_PCHAR}+(?:/{_PCHAR}*)*|)"
        rf"(?:\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?")
# The referee's email check is only "contains @"; this is a stricter, usual address shape.
_EMAIL = (r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-]+)*"
          r"@[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*")

FORMAT_PATTERNS = {
    "date": _DATE,
    "time": _TIME,
    "date-time": rf"{_DATE}[tT]{_TIME}",
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uuid": _UUID,
    "uri": _URI,
    "email": _EMAIL,
}


@functools.lru_cache(maxsize=None)
def format_dfa(name: str) -> DFA:
    """The trimmed DFA of one of FORMAT_PATTERNS, built once (schemas ask for the same few again and again)."""
    return trim(compile_pattern(FORMAT_PATTERNS[name]))
