"""Regexes for the string formats the converter enforces (string content, without quotes).

Each regex accepts only strings that are valid for the format (sound); a few rare valid forms
(leap seconds, IPv6 zone ids, quoted e-mail local parts, address literals, punycode labels,
63-character labels) are not produced. Any other format, defined by the specification
(UNSUPPORTED) or not (e.g. "int32", "color"), is an annotation, as the standard says, unless
the converter is asked for strict formats.
"""
from __future__ import annotations

from .chars import complement, json_char

_YEAR = "(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
_LEAP = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_DATE = ("(?:" + _YEAR + "-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
         "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
         "|" + _LEAP + "-02-29)")
_TIME = ("(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]+)?"
         "(?:[zZ]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])")
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_IPV4 = f"{_OCTET}(?:\\.{_OCTET}){{3}}"
_H16 = "[0-9a-fA-F]{1,4}"
_LS32 = f"(?:{_H16}:{_H16}|{_IPV4})"


def _ipv6() -> str:
    """RFC 3986 IPv6address: at most i groups before "::", a fixed tail after it."""
    alts = [f"(?:{_H16}:){{6}}{_LS32}"]
    tails = [f"(?:{_H16}:){{{n}}}{_LS32}" for n in (5, 4, 3, 2, 1)] + [_LS32, _H16, ""]
    for before, tail in enumerate(tails):
        head = "" if before == 0 else f"(?:(?:{_H16}:){{0,{before - 1}}}{_H16})?"
        alts.append(f"{head}::{tail}")
    return "(?:" + "|".join(alts) + ")"


_IPV6 = _ipv6()
_LABEL = ("(?:[A-Za-z0-9]|[A-Za-z0-9]{2}|[A-Za-z0-9][A-Za-z0-9-][A-Za-z0-9]"
          "(?:[A-Za-z0-9-]{0,58}[A-Za-z0-9])?)")
_HOSTNAME = f"{_LABEL}(?:\\.{_LABEL}){{0,3}}"
_ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
_EMAIL = f"{_ATEXT}+(?:\\.{_ATEXT}+)*@{_HOSTNAME}"
_HEXB = "[0-9a-fA-F]"
_UUID = f"{_HEXB}{{8}}-{_HEXB}{{4}}-{_HEXB}{{4}}-{_HEXB}{{4}}-{_HEXB}{{12}}"
_PCT = "%[0-9a-fA-F]{2}"
_UNRESERVED_SUB = "A-Za-z0-9\\-._~!$&'()*+,;="
_PCHAR = f"(?:[{_UNRESERVED_SUB}:@]|{_PCT})"
_REGNAME = f"(?:[{_UNRESERVED_SUB}]|{_PCT})*"
_AUTHORITY = (f"(?:(?:[{_UNRESERVED_SUB}:]|{_PCT})*@)?"
              f"(?:\\[{_IPV6}\\]|{_IPV4}|{_REGNAME})(?::[0-9]*)?")
_QUERY = f"(?:{_PCHAR}|[/?])*"
_URI = (f"[A-Za-z][A-Za-z0-9+.\\-]*:(?://{_AUTHORITY}(?:/{_PCHAR}*)*"
        f"|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?|{_PCHAR}+(?:/{_PCHAR}*)*|)"
        f"(?:\\?{_QUERY})?(?:#{_QUERY})?")

_SEG_NC = f"(?:[{_UNRESERVED_SUB}@]|{_PCT})"
_RELATIVE = (f"(?://{_AUTHORITY}(?:/{_PCHAR}*)*|/(?:{_PCHAR}+(?:/{_PCHAR}*)*)?"
             f"|{_SEG_NC}+(?:/{_PCHAR}*)*|)(?:\\?{_QUERY})?(?:#{_QUERY})?")
_DUR_TIME = "T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)"
_DURATION = (f"P(?:(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)"
             f"(?:{_DUR_TIME})?|{_DUR_TIME}|[0-9]+W)")
_JP_CHAR = json_char(complement([(0x2F, 0x2F), (0x7E, 0x7E)]))
_JSON_POINTER = f"(?:/(?:{_JP_CHAR}|~[01])*)*"

FORMATS: dict[str, str] = {
    "uri-reference": f"(?:{_URI}|{_RELATIVE})",
    "duration": _DURATION,
    "json-pointer": _JSON_POINTER,
    "relative-json-pointer": f"(?:0|[1-9][0-9]*)(?:#|{_JSON_POINTER})",
    "date": _DATE,
    "time": _TIME,
    "date-time": f"{_DATE}[tT]{_TIME}",
    "email": _EMAIL,
    "uuid": _UUID,
    "ipv4": _IPV4,
    "ipv6": _IPV6,
    "uri": _URI,
    "hostname": _HOSTNAME,
}


# formats defined by the specification that are not enforced
UNSUPPORTED = frozenset({"regex", "idn-email", "idn-hostname", "iri", "iri-reference",
                         "uri-template"})


def format_body(name: str) -> str | None:
    """Regex for the content of a string in format ``name``, or None when not enforced."""
    return FORMATS.get(name)
