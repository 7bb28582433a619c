"""The lisa_srl component and its decoding (its scorer is in :mod:`spacy_lisa.scoring`)."""
