"""Options of the JSON Schema converter."""
from __future__ import annotations

from dataclasses import dataclass

WHITESPACE_MODES = ("flexible", "compact", "indented")


@dataclass(frozen=True)
class SchemaOptions:
    """How schemas become grammars.

    whitespace: "flexible" (default) allows up to ``max_whitespace`` consecutive whitespace
        characters around punctuation, so json.dumps output and pretty-printed JSON both fit;
        "compact" allows none (the separators are exact: ``separators`` or "," and ":");
        "indented" is exactly json.dumps(value, indent=indent) (nesting up to ``max_depth``).
    separators: (item separator, key separator) for "compact", e.g. (", ", ": ").
    strict_properties: treat a missing additionalProperties as false (the standard says true).
    lenient: drop keywords that cannot be enforced instead of raising; they are listed on the
        result's ``dropped`` as (JSON pointer, keyword).
    max_string_length: largest length bound written into one string terminal (each counted
        character costs automaton states). Plain strings with longer bounds are written in
        chunks of 32 characters (rules linear in the bound, small shared terminals); a longer
        bound together with a pattern or a format is refused (UnsupportedSchemaError at its
        pointer) unless lenient, which tightens it to this value and lists it in ``dropped``.
    max_repeat: largest minItems/maxItems expanded into rules; beyond it LimitExceededError.
    max_rules: grammar size limit; beyond it LimitExceededError.
    max_schema_depth: deepest nesting of the schema document (objects and arrays); beyond it
        LimitExceededError before any conversion.
    max_enum: most values in one enum; beyond it LimitExceededError at the enum's pointer.
    integer_spelling: "literal" (default): ``"type": "integer"`` values are written as integer
        literals (``20``); "any" also accepts a zero fraction (``20.0``) of at most
        ``max_fraction_zeros`` zeros, which JSON Schema counts as an integer too.
    strict_formats: refuse a ``format`` the converter does not enforce (by default such a
        format is what the standard says, an annotation, and is listed on ``annotations``).
    property_order: "schema" (default, as the peers do): declared properties in the order the
        schema lists them, additional properties anywhere between them; "any": declared
        properties in any order, extra properties anywhere, property counts exact, for any
        number of properties (the grammar counts members; its matchers keep keys distinct).
        An object under a complement that needs one of its members to fail (a "witness")
        is written out per subset of members: at most ``max_any_order_properties`` of them,
        larger ones keep schema order. In every mode an object's keys are distinct (keys
        compare decoded), and extra members whose keys come from a finite set of more than
        256 keys are capped at 256 per object.
    compile_timeout: seconds the conversion may take (None: no limit); LimitExceededError after.
    """

    whitespace: str = "flexible"
    max_whitespace: int = 32
    indent: int = 2
    max_depth: int = 24
    separators: tuple[str, str] | None = None
    strict_properties: bool = False
    lenient: bool = False
    max_string_length: int = 64
    max_repeat: int = 2000
    max_rules: int = 200_000
    max_schema_depth: int = 1024
    property_order: str = "schema"
    max_any_order_properties: int = 8
    max_enum: int = 4096
    integer_spelling: str = "literal"
    max_fraction_zeros: int = 16
    strict_formats: bool = False
    compile_timeout: float | None = 60.0

    def __post_init__(self) -> None:
        if self.whitespace not in WHITESPACE_MODES:
            raise ValueError(f"whitespace must be one of {WHITESPACE_MODES}, not {self.whitespace!r}")
        if self.property_order not in ("schema", "any"):
            raise ValueError(f"property_order must be 'schema' or 'any', not "
                             f"{self.property_order!r}")
        if self.integer_spelling not in ("literal", "any"):
            raise ValueError(f"integer_spelling must be 'literal' or 'any', not "
                             f"{self.integer_spelling!r}")
        if self.max_fraction_zeros < 1:
            raise ValueError("max_fraction_zeros must be >= 1")
        if not 0 <= self.max_any_order_properties <= 16:
            raise ValueError("max_any_order_properties must be between 0 and 16")
        if self.max_whitespace < 1 or self.indent < 0 or self.max_depth < 1:
            raise ValueError("max_whitespace and max_depth must be >= 1, indent >= 0")
        if self.separators is not None:
            item, key = self.separators
            if item.strip() != "," or key.strip() != ":":
                raise ValueError(f"separators must be a comma and a colon with optional spaces: "
                                 f"{self.separators!r}")
