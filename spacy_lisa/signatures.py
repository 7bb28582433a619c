"""Registered functions whose keyword parameters are a dataclass's fields.

spaCy validates a config block against the signature of the function it names, so the
options of a factory or an architecture must be parameters; the dataclass declares them
once, with their defaults and validation, and the signature is made from it.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
# field types a config holds as they are: the signature keeps them for spaCy's checks;
# other fields are annotated Any (the dataclass converts and validates them)
PLAIN_TYPES = (int, float, str, bool)


def with_fields_as_parameters(cls: type, *, defaults: bool) -> Callable[[F], F]:
    """Replace the ``**kwargs`` of the decorated function's signature with one
    keyword-only parameter per field of the dataclass ``cls`` (with the field's default
    when ``defaults``), annotated with the field's type where it is a plain one."""
    hints = typing.get_type_hints(cls)

    def decorate(func: F) -> F:
        signature = inspect.signature(func)
        parameters = [p for p in signature.parameters.values() if p.kind != p.VAR_KEYWORD]
        annotations = dict(func.__annotations__)
        annotations.pop(
            next(p.name for p in signature.parameters.values() if p.kind == p.VAR_KEYWORD)
        )
        for field in dataclasses.fields(cls):
            hint = hints[field.name] if hints[field.name] in PLAIN_TYPES else Any
            default = field.default if defaults else inspect.Parameter.empty
            parameters.append(
                inspect.Parameter(
                    field.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint
                )
            )
            annotations[field.name] = hint
        func.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
        func.__annotations__ = annotations
        return func

    return decorate
