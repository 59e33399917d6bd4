"""JSON Schema and Pydantic front-end: schemas become grammars of their valid JSON texts."""
from .api import SchemaGrammar, pydantic_to_grammar, schema_to_grammar
from .options import SchemaOptions

__all__ = ["SchemaGrammar", "SchemaOptions", "pydantic_to_grammar", "schema_to_grammar"]
