"""Numbered error and warning messages, in the style of spaCy's ``spacy/errors.py``.

Every message says what was wrong *and* what to do about it. Use them as
``raise ValueError(Errors.E001.format(...))``; the code is prefixed automatically.
Add new messages with the next free number; never renumber.
"""


class ErrorsWithCodes(type):
    def __getattribute__(self, code: str) -> str:
        msg = super().__getattribute__(code)
        if code.startswith("__"):  # python system attributes like __class__
            return msg
        return f"[{code}] {msg}"


class Warnings(metaclass=ErrorsWithCodes):
    W001 = (
        "Doc '{doc}' has a window of {length} tokens, longer than the component's "
        "max_length={max_length}. It is split into windows of at most {max_length} tokens; "
        "attention and the parse do not cross window boundaries. Add a sentence splitter "
        "(e.g. 'senter' or 'parser') before 'lisa_srl' to split at sentence boundaries."
    )
    W002 = (
        "Skipped {n} training example(s) whose reference doc has no gold SRL frames "
        "annotation (doc._.srl_frames is None). Convert the data with 'spacy-lisa convert'."
    )


class Errors(metaclass=ErrorsWithCodes):
    # --- corpus formats ---------------------------------------------------------------
    E001 = "{path}:{line}: {message}"
    E002 = (
        "{path}: the file is empty. Check that the path points to the converted data and "
        "that the conversion finished."
    )
    E003 = "{path}: the file is not valid UTF-8 ({detail}). Re-encode it as UTF-8."
    # --- extensions / frames ----------------------------------------------------------
    E010 = (
        "Invalid SRL frame data for doc '{doc}': {message}. Frames are dicts with "
        "'predicate' [start, end), optional 'roleset' and 'lemma', and 'roles' as a list "
        "of [start, end, label] with token offsets inside the doc."
    )
    E011 = (
        "Invalid predicate marking in doc._.srl_predicates: {value!r}. Set it to a list of "
        "token indices, Tokens or Spans of this doc, e.g. doc._.srl_predicates = [3, 7]."
    )
    # --- component ----------------------------------------------------------------------
    E020 = (
        "The 'lisa_srl' component '{name}' is not initialized. Call nlp.initialize() (or "
        "train with 'spacy train') before using it, or load a trained pipeline."
    )
    E021 = (
        "'lisa_srl' initialize() got no training examples with gold SRL frames. Pass "
        "get_examples returning Examples whose reference docs carry doc._.srl_frames (as "
        "written by 'spacy-lisa convert')."
    )
    E022 = (
        "parse_source='doc' but doc '{doc}' has no dependency parse. Add a parser before "
        "'lisa_srl' in the pipeline, set the heads on the doc, or use parse_source='auto'."
    )
    E023 = (
        "predicate_source='doc' but doc '{doc}' has no predicates marked. Set "
        "doc._.srl_predicates (a list of token indices or Spans) before the component "
        "runs, or use predicate_source='model'."
    )
    E024 = "Unknown value {value!r} for option '{option}'. Choose one of: {choices}."
    E025 = (
        "The model's dimensions are unknown, so its weights cannot be loaded. The saved "
        "component config lacks 'model_dims': re-save the pipeline with this version."
    )
    E026 = "Unknown parse mode {value!r}. Choose one of: {choices}."
