"""The lisa_srl component (being written; see issue 4)."""


def make_lisa_srl(*args, **kwargs):  # placeholder until the component lands
    raise NotImplementedError("lisa_srl is not implemented yet")
