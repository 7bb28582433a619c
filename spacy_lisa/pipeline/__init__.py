"""The lisa_srl component (its decoding is in :mod:`spacy_lisa.decoding`, its scorer in
:mod:`spacy_lisa.scoring`)."""
