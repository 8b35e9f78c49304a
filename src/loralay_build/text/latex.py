"""A small LaTeX-to-text converter for metadata abstracts (arXiv) that never drops text.

General LaTeX converters treat `%` as a comment and `&` as an alignment tab. In abstracts
whose newlines were already collapsed that deletes everything after "45%". Here `%`, `&`
and `$` stay text unless escaped, math keeps its content, and an unknown command loses
only its name, never its arguments.
"""

from __future__ import annotations

import re
import unicodedata

_ACCENTS = {
    "'": "\u0301",
    "`": "\u0300",
    "^": "\u0302",
    '"': "\u0308",
    "~": "\u0303",
    "=": "\u0304",
    ".": "\u0307",
    "c": "\u0327",
    "v": "\u030c",
    "u": "\u0306",
    "H": "\u030b",
    "k": "\u0328",
    "r": "\u030a",
}
_SYMBOLS = {
    "ss": "ß", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "o": "ø", "O": "Ø",
    "aa": "å", "AA": "Å", "l": "ł", "L": "Ł", "i": "i", "j": "j",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε",
    "varepsilon": "ε", "zeta": "ζ", "eta": "η", "theta": "θ", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ",
    "sigma": "σ", "tau": "τ", "phi": "φ", "varphi": "φ", "chi": "χ", "psi": "ψ",
    "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ",
    "Sigma": "Σ", "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω", "Pi": "Π",
    "times": "×", "cdot": "·", "pm": "±", "leq": "≤", "le": "≤", "geq": "≥",
    "ge": "≥", "neq": "≠", "approx": "≈", "sim": "~", "infty": "∞",
    "to": "→", "rightarrow": "→", "leftarrow": "←", "in": "∈", "ell": "ℓ",
    "ldots": "…", "dots": "…", "cdots": "⋯", "textasciitilde": "~",
    "textbackslash": "\\", "LaTeX": "LaTeX", "TeX": "TeX", "log": "log", "exp": "exp",
    "sum": "∑", "prod": "∏", "partial": "∂", "nabla": "∇", "%": "%", "&": "&",
    "$": "$", "#": "#", "_": "_", "{": "{", "}": "}", ",": " ", ";": " ", ":": " ",
    "!": "", " ": " ", "\\": " ", "quad": " ", "qquad": " ", "newline": " ", "par": " ",
}
# Commands whose single argument is not text and is dropped with them (and a tie before).
_DROP_ARG = frozenset({"cite", "citep", "citet", "ref", "eqref", "label", "footnotemark"})
_ACCENT = re.compile(
    r"\\([`'^\"~=.]|[cvuHkr](?![A-Za-z]))\s*(?:\{\s*(\\?[A-Za-z])\s*\}|(\\?[A-Za-z]))"
)
_COMMAND = re.compile(r"\\([A-Za-z]+\*?|.)(\s*)")
_DROP = re.compile(r"~?\\(" + "|".join(sorted(_DROP_ARG)) + r")\*?\s*(\[[^\]]*\])?\{[^{}]*\}")
# Inline or display math: `$` pairs that hug their content, `\(...\)` and `\[...\]`.
_MATH = re.compile(
    r"(?<!\\)(\$\$?)(?=[^\s$])(.+?)(?<=[^\s\\])\1|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S
)
_TIE = re.compile(r"(?<=\S)(?<!\\)~(?=\S)")
_BRACE = re.compile(r"(?<!\\)[{}]")
_DASHES = (("---", "—"), ("--", "–"), ("``", "“"), ("''", "”"))
# Escaped characters are parked on private code points until markup is gone.
_PARKED = {"$": "\ue000", "_": "\ue001", "~": "\ue002", "{": "\ue003", "}": "\ue004",
           "^": "\ue005", "%": "%", "&": "&", "#": "#"}


def latex_to_text(text: str) -> str:
    """Plain text of a LaTeX abstract; every character that is not markup survives."""
    text = _DROP.sub("", text)
    text = _ACCENT.sub(_accent, text)
    text = _MATH.sub(_math, text)
    text = _TIE.sub(" ", text)
    text = _COMMAND.sub(_command, text)
    text = _BRACE.sub("", text)
    for tex, char in _DASHES:
        text = text.replace(tex, char)
    for char, parked in _PARKED.items():
        text = text.replace(parked, char)
    return unicodedata.normalize("NFC", text)


def _math(m: re.Match[str]) -> str:
    """Math content without sub/superscript markers: `$O(n^2)$` prints as "O(n2)"."""
    body = m.group(2) or m.group(3) or m.group(4) or ""
    return re.sub(r"(?<!\\)[_^]", "", body)


def _accent(m: re.Match[str]) -> str:
    base = (m.group(2) or m.group(3)).lstrip("\\")
    return base + _ACCENTS[m.group(1)]


def _command(m: re.Match[str]) -> str:
    """Replace one command by its symbol, or by nothing; its arguments stay as text."""
    name = m.group(1).rstrip("*")
    if name in _PARKED:
        return _PARKED[name] + m.group(2)
    symbol = _SYMBOLS.get(name)
    space = " " if m.group(2) else ""
    if symbol is None:
        return space if name.isalpha() else ""
    return symbol + (space if name.isalpha() or not symbol.strip() else m.group(2))
